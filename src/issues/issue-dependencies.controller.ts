import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { RepositoryTarget } from '../access/repository-policy';
import { AuthenticatedLater, Public } from '../auth/route-auth';
import { ApiErrors } from '../common/openapi';
import { ApiPaging, PageQuery, Paging } from '../common/paging';
import { bindOption } from '../http/body-binding';
import { DeferredBody, LazyBody, ReadsBody } from '../http/body-guard';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { IssueDependenciesService } from './issue-dependencies.service';
import { IssueMeta } from './issue-dependency.options';
import { IssueWire } from './issue.wire';

/** What an issue waits for (`/dependencies`) and what waits for it (`/blocks`). */
@ApiTags('issue')
@Controller()
export class IssueDependenciesController {
  constructor(private readonly dependencies: IssueDependenciesService) {}

  @Get('repos/:owner/:repo/issues/:index/dependencies')
  @Public('issue')
  @RepositoryRoute({ unit: 'repo.issues' })
  @ApiOperation({ summary: "List an issue's dependencies, i.e all issues that block this issue." })
  @ApiPaging()
  @ApiOkResponse({ type: [IssueWire], description: 'IssueList' })
  @ApiErrors(404)
  listDependencies(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @Paging() page: PageQuery): Promise<IssueWire[]> {
    return this.dependencies.list(target, index, 'dependencies', page);
  }

  @Post('repos/:owner/:repo/issues/:index/dependencies')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in', archived: 'refuse' })
  @ReadsBody({ deferred: true })
  @ApiOperation({ summary: 'Make the issue in the url depend on the issue in the form.' })
  @ApiBody({ type: IssueMeta })
  @ApiCreatedResponse({ type: IssueWire })
  @ApiErrors(401, 404, 422, 423)
  async addDependency(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @DeferredBody() body: LazyBody): Promise<IssueWire> {
    return this.dependencies.change(target, index, 'dependencies', true, await bindOption(body, IssueMeta));
  }

  @Delete('repos/:owner/:repo/issues/:index/dependencies')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in', archived: 'refuse' })
  @ReadsBody({ deferred: true })
  @HttpCode(201)
  @ApiOperation({ summary: 'Remove an issue dependency' })
  @ApiBody({ type: IssueMeta })
  @ApiCreatedResponse({ type: IssueWire })
  @ApiErrors(401, 404, 423)
  async removeDependency(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @DeferredBody() body: LazyBody): Promise<IssueWire> {
    return this.dependencies.change(target, index, 'dependencies', false, await bindOption(body, IssueMeta));
  }

  @Get('repos/:owner/:repo/issues/:index/blocks')
  @Public('issue')
  @RepositoryRoute({ unit: 'repo.issues' })
  @ApiOperation({ summary: 'List issues that are blocked by this issue' })
  @ApiPaging()
  @ApiOkResponse({ type: [IssueWire], description: 'IssueList' })
  @ApiErrors(404)
  listBlocks(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @Paging() page: PageQuery): Promise<IssueWire[]> {
    return this.dependencies.list(target, index, 'blocks', page);
  }

  @Post('repos/:owner/:repo/issues/:index/blocks')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in' })
  @ReadsBody({ deferred: true })
  @ApiOperation({ summary: 'Block the issue given in the body by the issue in path' })
  @ApiBody({ type: IssueMeta })
  @ApiCreatedResponse({ type: IssueWire })
  @ApiErrors(401, 404, 422)
  async addBlock(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @DeferredBody() body: LazyBody): Promise<IssueWire> {
    return this.dependencies.change(target, index, 'blocks', true, await bindOption(body, IssueMeta));
  }

  @Delete('repos/:owner/:repo/issues/:index/blocks')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in' })
  @ReadsBody({ deferred: true })
  @HttpCode(201)
  @ApiOperation({ summary: 'Unblock the issue given in the body by the issue in path' })
  @ApiBody({ type: IssueMeta })
  @ApiCreatedResponse({ type: IssueWire })
  @ApiErrors(401, 404)
  async removeBlock(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @DeferredBody() body: LazyBody): Promise<IssueWire> {
    return this.dependencies.change(target, index, 'blocks', false, await bindOption(body, IssueMeta));
  }
}
