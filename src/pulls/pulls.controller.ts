import { Controller, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { RepositoryTarget } from '../access/repository-policy';
import { AuthenticatedLater, Public } from '../auth/route-auth';
import { ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedWires, PageQuery, Paging } from '../common/paging';
import { flag } from '../content/commits.service';
import { CommitWire } from '../content/content.wire';
import { deliverTo } from '../content/download-delivery';
import { WildcardParam } from '../content/route-params';
import { GitConfig } from '../config/slices';
import { bindOption } from '../http/body-binding';
import { DeferredBody, LazyBody, ReadsBody } from '../http/body-guard';
import { queryString } from '../http/query';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { CreatePullRequestOption, EditPullRequestOption } from './pull.options';
import { ChangedFileWire, CompareWire, PullRequestWire } from './pull.wire';
import { PullsService } from './pulls.service';

/**
 * The pull request routes of one repository. Routes with a literal segment after `{index}` come before
 * `{base}/{head}`, whose head may hold slashes.
 */
@ApiTags('repository')
@Controller()
export class PullsController {
  private readonly rate: { minRate: number; windowMs: number };

  constructor(
    private readonly pulls: PullsService,
    gitConfig: GitConfig,
  ) {
    this.rate = { minRate: gitConfig.minTransferRate, windowMs: gitConfig.transferWindowMs };
  }

  @Get('repos/:owner/:repo/pulls')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true })
  @ApiOperation({ summary: "List a repo's pull requests" })
  @ApiQuery({ name: 'state', required: false, enum: ['open', 'closed', 'all'], description: 'State of pull request (open by default)' })
  @ApiQuery({
    name: 'sort',
    required: false,
    enum: ['oldest', 'recentupdate', 'leastupdate', 'mostcomment', 'leastcomment', 'priority'],
    description: 'Type of sort',
  })
  @ApiQuery({ name: 'milestone', required: false, type: Number, description: 'ID of the milestone' })
  @ApiQuery({ name: 'labels', required: false, type: [Number], description: 'Label IDs' })
  @ApiQuery({ name: 'poster', required: false, type: String, description: 'Filter by pull request author' })
  @ApiPaging()
  @ApiOkResponse({ type: [PullRequestWire], description: 'PullRequestList' })
  @ApiErrors(400, 404, 422)
  async list(
    @TargetRepository() target: RepositoryTarget,
    @Query() query: Record<string, unknown>,
    @Paging() page: PageQuery,
  ): Promise<PagedList<PullRequestWire>> {
    return pagedWires(await this.pulls.list(target, query, page), page);
  }

  @Post('repos/:owner/:repo/pulls')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true, mode: 'signed-in', archived: 'refuse' })
  @ReadsBody({ deferred: true })
  @ApiOperation({ summary: 'Create a pull request' })
  @ApiBody({ type: CreatePullRequestOption })
  @ApiCreatedResponse({ type: PullRequestWire })
  @ApiErrors(401, 403, 404, 409, 422, 423)
  async create(@TargetRepository() target: RepositoryTarget, @DeferredBody() body: LazyBody): Promise<PullRequestWire> {
    return this.pulls.create(target, await bindOption(body, CreatePullRequestOption));
  }

  @Get('repos/:owner/:repo/pulls/pinned')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true })
  @ApiOperation({ summary: "List a repo's pinned pull requests" })
  @ApiOkResponse({ type: [PullRequestWire], description: 'PullRequestList' })
  @ApiErrors(404)
  pinned(@TargetRepository() target: RepositoryTarget): Promise<PullRequestWire[]> {
    return this.pulls.pinned(target);
  }

  @Get('repos/:owner/:repo/pulls/:index.:diffType')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true })
  @ApiOperation({ summary: 'Get a pull request diff or patch' })
  @ApiParam({ name: 'diffType', enum: ['diff', 'patch'], description: 'whether the output is diff or patch' })
  @ApiQuery({
    name: 'binary',
    required: false,
    type: Boolean,
    description: 'whether to include binary file changes. if true, the diff is applicable with `git apply`',
  })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'APIString', schema: { type: 'string' } })
  @ApiErrors(404)
  async diffOrPatch(
    @TargetRepository() target: RepositoryTarget,
    @Param('index') index: string,
    @Param('diffType') diffType: string,
    @Query() query: Record<string, unknown>,
    @Res() response: Response,
  ): Promise<void> {
    if (diffType !== 'diff' && diffType !== 'patch') {
      response.status(404).end();
      return;
    }
    // Streamed to the client (a diff has no size bound); a client that goes away stops git.
    await this.pulls.diffOrPatch(target, index, diffType, queryString(query.binary) === 'true', deliverTo(response, this.rate));
  }

  @Get('repos/:owner/:repo/pulls/:index')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true })
  @ApiOperation({ summary: 'Get a pull request' })
  @ApiOkResponse({ type: PullRequestWire })
  @ApiErrors(404)
  get(@TargetRepository() target: RepositoryTarget, @Param('index') index: string): Promise<PullRequestWire> {
    return this.pulls.get(target, index);
  }

  @Patch('repos/:owner/:repo/pulls/:index')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true, mode: 'signed-in' })
  @ReadsBody({ deferred: true })
  @HttpCode(201)
  @ApiOperation({ summary: 'Update a pull request. If using deadline only the date will be taken into account, and time of day ignored.' })
  @ApiBody({ type: EditPullRequestOption })
  @ApiCreatedResponse({ type: PullRequestWire })
  @ApiErrors(401, 403, 404, 409, 412, 422)
  async edit(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @DeferredBody() body: LazyBody): Promise<PullRequestWire> {
    return this.pulls.edit(target, index, await bindOption(body, EditPullRequestOption));
  }

  @Get('repos/:owner/:repo/pulls/:index/files')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true })
  @ApiOperation({ summary: 'Get changed files for a pull request' })
  @ApiQuery({ name: 'skip-to', required: false, type: String, description: 'skip to given file (ignored)' })
  @ApiQuery({
    name: 'whitespace',
    required: false,
    enum: ['ignore-all', 'ignore-change', 'ignore-eol', 'show-all'],
    description: 'whitespace behavior (ignored)',
  })
  @ApiPaging()
  @ApiOkResponse({ type: [ChangedFileWire], description: 'ChangedFileList' })
  @ApiErrors(404)
  async files(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @Paging() page: PageQuery): Promise<PagedList<ChangedFileWire>> {
    return pagedWires(await this.pulls.files(target, index, page), page);
  }

  @Get('repos/:owner/:repo/pulls/:index/commits')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true })
  @ApiOperation({ summary: 'Get commits for a pull request' })
  @ApiQuery({ name: 'verification', required: false, type: Boolean, description: 'include verification for every commit (default true)' })
  @ApiQuery({ name: 'files', required: false, type: Boolean, description: 'include a list of affected files for every commit (default true)' })
  @ApiPaging()
  @ApiOkResponse({ type: [CommitWire], description: 'CommitList' })
  @ApiErrors(404)
  async commits(
    @TargetRepository() target: RepositoryTarget,
    @Param('index') index: string,
    @Query() query: Record<string, unknown>,
    @Paging() page: PageQuery,
  ): Promise<PagedList<CommitWire>> {
    const files = flag(queryString(query.files));
    return pagedWires(await this.pulls.commits(target, index, page, { stat: true, files }), page);
  }

  @Get('repos/:owner/:repo/pulls/:base/*head')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true })
  @ApiOperation({ summary: 'Get a pull request by base and head' })
  @ApiParam({ name: 'base', type: String, description: 'base of the pull request to get' })
  @ApiParam({ name: 'head', type: String, description: 'head of the pull request to get' })
  @ApiOkResponse({ type: PullRequestWire })
  @ApiErrors(404)
  byBaseAndHead(@TargetRepository() target: RepositoryTarget, @Param('base') base: string, @WildcardParam('head') head: string): Promise<PullRequestWire> {
    return this.pulls.byBaseAndHead(target, base, head);
  }
}

/** Comparing revisions, and the pull request a commit was merged by: routes of the code. */
@ApiTags('repository')
@Controller()
export class CompareController {
  private readonly rate: { minRate: number; windowMs: number };

  constructor(
    private readonly pulls: PullsService,
    gitConfig: GitConfig,
  ) {
    this.rate = { minRate: gitConfig.minTransferRate, windowMs: gitConfig.transferWindowMs };
  }

  @Get('repos/:owner/:repo/compare/*basehead')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ summary: 'Get commit comparison information' })
  @ApiParam({ name: 'basehead', type: String, description: 'compare two branches or commits: `base...head`' })
  @ApiOkResponse({ type: CompareWire })
  @ApiErrors(404)
  compare(
    @TargetRepository() target: RepositoryTarget,
    @WildcardParam('basehead') basehead: string,
    @Query() query: Record<string, unknown>,
  ): Promise<CompareWire> {
    return this.pulls.compareRevisions(target, basehead, { stat: true, files: flag(queryString(query.files)) });
  }

  @Get('repos/:owner/:repo/commits/:sha/pull')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ summary: 'Get the merged pull request of the commit' })
  @ApiOkResponse({ type: PullRequestWire })
  @ApiErrors(404)
  byCommit(@TargetRepository() target: RepositoryTarget, @Param('sha') sha: string): Promise<PullRequestWire> {
    return this.pulls.byMergedCommit(target, sha);
  }
}
