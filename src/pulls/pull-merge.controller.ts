import { Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { RepositoryTarget } from '../access/repository-policy';
import { AuthenticatedLater, Public } from '../auth/route-auth';
import { ApiErrors } from '../common/openapi';
import { bindOption } from '../http/body-binding';
import { queryString } from '../http/query';
import { DeferredBody, LazyBody, ReadsBody } from '../http/body-guard';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { MergePullRequestOption } from './pull-merge.option';
import { MERGE_ROUTE, PullMergeService } from './pull-merge.service';
import { PullUpdatesService } from './pull-updates.service';

/** Merging a pull request; registered before the pull request routes, whose `{base}/{head}` would match. */
@ApiTags('repository')
@Controller()
export class PullMergeController {
  constructor(
    private readonly merges: PullMergeService,
    private readonly updates: PullUpdatesService,
  ) {}

  @Get('repos/:owner/:repo/pulls/:index/merge')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true })
  @HttpCode(204)
  @ApiOperation({ summary: 'Check if a pull request has been merged' })
  @ApiNoContentResponse({ description: 'pull request has been merged' })
  @ApiErrors(404)
  isMerged(@TargetRepository() target: RepositoryTarget, @Param('index') index: string): Promise<void> {
    return this.merges.isMerged(target, index);
  }

  @Post('repos/:owner/:repo/pulls/:index/merge')
  @AuthenticatedLater('repository')
  @RepositoryRoute(MERGE_ROUTE)
  @ReadsBody({ deferred: true })
  @HttpCode(200)
  @ApiOperation({ summary: 'Merge a pull request' })
  @ApiBody({ type: MergePullRequestOption })
  @ApiOkResponse({ description: 'empty' })
  @ApiCreatedResponse({ description: "scheduled to merge once the head's checks pass (merge_when_checks_succeed)" })
  @ApiErrors(404, 405, 409, 413, 423)
  async merge(
    @TargetRepository() target: RepositoryTarget,
    @Param('index') index: string,
    @DeferredBody() body: LazyBody,
    @Res({ passthrough: true }) response: Response,
  ): Promise<void> {
    if ((await this.merges.merge(target, index, await bindOption(body, MergePullRequestOption))) === 'scheduled') response.status(201);
  }

  @Delete('repos/:owner/:repo/pulls/:index/merge')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true, mode: 'signed-in', archived: 'refuse' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Cancel the scheduled auto merge for the given pull request' })
  @ApiNoContentResponse({ description: 'empty' })
  @ApiErrors(403, 404, 423)
  cancelAutoMerge(@TargetRepository() target: RepositoryTarget, @Param('index') index: string): Promise<void> {
    return this.merges.cancelAutoMerge(target, index);
  }

  @Post('repos/:owner/:repo/pulls/:index/update')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true, mode: 'signed-in', archived: 'refuse' })
  @HttpCode(200)
  @ApiOperation({ summary: "Merge PR's baseBranch into headBranch" })
  @ApiQuery({ name: 'style', required: false, enum: ['merge', 'rebase'], description: 'how to update pull request' })
  @ApiOkResponse({ description: 'empty' })
  @ApiErrors(403, 404, 409, 422)
  update(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @Query() query: Record<string, unknown>): Promise<void> {
    return this.updates.update(target, index, queryString(query.style) ?? '');
  }
}
