import { Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { RepositoryTarget } from '../access/repository-policy';
import { AuthenticatedLater, Public } from '../auth/route-auth';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { IssuePinsService } from './issue-pins.service';
import { IssueWire, NewIssuePinsAllowedWire } from './issue.wire';

/** Pinned issues of a repository. */
@ApiTags('issue')
@Controller()
export class IssuePinsController {
  constructor(private readonly pins: IssuePinsService) {}

  @Get('repos/:owner/:repo/issues/pinned')
  @Public('issue')
  @RepositoryRoute({ unit: 'repo.issues' })
  @ApiOperation({ summary: "List a repo's pinned issues" })
  @ApiOkResponse({ type: [IssueWire], description: 'IssueList' })
  @ApiErrors(404)
  pinned(@TargetRepository() target: RepositoryTarget): Promise<IssueWire[]> {
    return this.pins.pinned(target);
  }

  @Post('repos/:owner/:repo/issues/:index/pin')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'admin' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Pin an Issue' })
  @ApiEmpty()
  @ApiErrors(400, 401, 403, 404)
  async pin(@TargetRepository() target: RepositoryTarget, @Param('index') index: string): Promise<void> {
    await this.pins.pin(target, index);
  }

  @Delete('repos/:owner/:repo/issues/:index/pin')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'admin' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Unpin an Issue' })
  @ApiEmpty()
  @ApiErrors(401, 403, 404)
  async unpin(@TargetRepository() target: RepositoryTarget, @Param('index') index: string): Promise<void> {
    await this.pins.unpin(target, index);
  }

  @Patch('repos/:owner/:repo/issues/:index/pin/:position')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'admin' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Moves the Pin to the given Position' })
  @ApiEmpty()
  @ApiErrors(400, 401, 403, 404)
  async move(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @Param('position') position: string): Promise<void> {
    await this.pins.move(target, index, position);
  }

  @Get('repos/:owner/:repo/new_pin_allowed')
  @Public('repository')
  @RepositoryRoute()
  @ApiTags('repository')
  @ApiOperation({ summary: 'Returns if new Issue Pins are allowed' })
  @ApiOkResponse({ type: NewIssuePinsAllowedWire })
  @ApiErrors(404)
  newPinAllowed(@TargetRepository() target: RepositoryTarget): Promise<NewIssuePinsAllowedWire> {
    return this.pins.newPinAllowed(target);
  }
}
