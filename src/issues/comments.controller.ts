import { Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { RepositoryTarget } from '../access/repository-policy';
import { AuthenticatedLater, Public } from '../auth/route-auth';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedWires, PageQuery, Paging } from '../common/paging';
import { bindOption } from '../http/body-binding';
import { DeferredBody, LazyBody, ReadsBody } from '../http/body-guard';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { CreateIssueCommentOption, EditIssueCommentOption } from './comment.options';
import { CommentWire, TimelineCommentWire } from './comment.wire';
import { CommentsService } from './comments.service';
import { issueBodyLimit } from './issue-limits';

const SINCE = ApiQuery({
  name: 'since',
  required: false,
  type: String,
  description: 'if provided, only comments updated since the specified time are returned.',
});
const BEFORE = ApiQuery({
  name: 'before',
  required: false,
  type: String,
  description: 'if provided, only comments updated before the provided time are returned.',
});

/** Forgejo answers 204 without a body when the id names a timeline event rather than a plain comment. */
function orNoContent(response: Response, wire: CommentWire | undefined): CommentWire | undefined {
  if (wire === undefined) response.status(204);
  return wire;
}

/**
 * Comments of issues. Registered before IssuesController, so that `issues/comments` is not read as an issue
 * number.
 */
@ApiTags('issue')
@Controller()
export class CommentsController {
  constructor(private readonly comments: CommentsService) {}

  @Get('repos/:owner/:repo/issues/comments')
  @Public('issue')
  @RepositoryRoute({ unit: 'repo.issues' })
  @ApiOperation({ summary: 'List all comments in a repository' })
  @SINCE
  @BEFORE
  @ApiPaging()
  @ApiOkResponse({ type: [CommentWire], description: 'CommentList' })
  @ApiErrors(404, 422)
  async listOfRepository(
    @TargetRepository() target: RepositoryTarget,
    @Query() query: Record<string, unknown>,
    @Paging() page: PageQuery,
  ): Promise<PagedList<CommentWire>> {
    return pagedWires(await this.comments.listOfRepository(target, query, page), page);
  }

  @Get('repos/:owner/:repo/issues/comments/:id')
  @Public('issue')
  @RepositoryRoute({ unit: 'repo.issues' })
  @ApiOperation({ summary: 'Get a comment' })
  @ApiOkResponse({ type: CommentWire })
  @ApiNoContentResponse({ description: 'not a plain comment' })
  @ApiErrors(404)
  async get(
    @TargetRepository() target: RepositoryTarget,
    @Param('id') id: string,
    @Res({ passthrough: true }) response: Response,
  ): Promise<CommentWire | undefined> {
    return orNoContent(response, await this.comments.get(target, id));
  }

  @Patch('repos/:owner/:repo/issues/comments/:id')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in', archived: 'refuse' })
  @ReadsBody({ deferred: true, limit: issueBodyLimit })
  @ApiOperation({ summary: 'Edit a comment' })
  @ApiBody({ type: EditIssueCommentOption })
  @ApiOkResponse({ type: CommentWire })
  @ApiNoContentResponse({ description: 'not a plain comment' })
  @ApiErrors(401, 403, 404, 422, 423)
  async edit(
    @TargetRepository() target: RepositoryTarget,
    @Param('id') id: string,
    @DeferredBody() body: LazyBody,
    @Res({ passthrough: true }) response: Response,
  ): Promise<CommentWire | undefined> {
    return orNoContent(response, await this.comments.edit(target, id, await bindOption(body, EditIssueCommentOption)));
  }

  @Delete('repos/:owner/:repo/issues/comments/:id')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a comment' })
  @ApiEmpty()
  @ApiErrors(401, 403, 404)
  async delete(@TargetRepository() target: RepositoryTarget, @Param('id') id: string): Promise<void> {
    await this.comments.delete(target, id);
  }

  @Get('repos/:owner/:repo/issues/:index/comments')
  @Public('issue')
  @RepositoryRoute({ unit: 'repo.issues' })
  @ApiOperation({ summary: 'List all comments on an issue' })
  @SINCE
  @BEFORE
  @ApiPaging()
  @ApiOkResponse({ type: [CommentWire], description: 'CommentList' })
  @ApiErrors(404, 422)
  async listOfIssue(
    @TargetRepository() target: RepositoryTarget,
    @Param('index') index: string,
    @Query() query: Record<string, unknown>,
    @Paging() page: PageQuery,
  ): Promise<PagedList<CommentWire>> {
    return pagedWires(await this.comments.listOfIssue(target, index, query, page), page);
  }

  @Get('repos/:owner/:repo/issues/:index/timeline')
  @Public('issue')
  @RepositoryRoute({ unit: 'repo.issues' })
  @ApiOperation({ summary: 'List all comments and events on an issue' })
  @SINCE
  @BEFORE
  @ApiPaging()
  @ApiOkResponse({ type: [TimelineCommentWire], description: 'TimelineList' })
  @ApiErrors(404, 422)
  async timeline(
    @TargetRepository() target: RepositoryTarget,
    @Param('index') index: string,
    @Query() query: Record<string, unknown>,
    @Paging() page: PageQuery,
  ): Promise<PagedList<TimelineCommentWire>> {
    return pagedWires(await this.comments.timeline(target, index, query, page), page);
  }

  @Post('repos/:owner/:repo/issues/:index/comments')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in', archived: 'refuse' })
  @ReadsBody({ deferred: true, limit: issueBodyLimit })
  @ApiOperation({ summary: 'Add a comment to an issue' })
  @ApiBody({ type: CreateIssueCommentOption })
  @ApiCreatedResponse({ type: CommentWire })
  @ApiErrors(401, 403, 404, 422, 423)
  async create(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @DeferredBody() body: LazyBody): Promise<CommentWire> {
    return this.comments.create(target, index, await bindOption(body, CreateIssueCommentOption));
  }

  @Patch('repos/:owner/:repo/issues/:index/comments/:id')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in', archived: 'refuse' })
  @ReadsBody({ deferred: true, limit: issueBodyLimit })
  @ApiOperation({ summary: 'Edit a comment', deprecated: true })
  @ApiBody({ type: EditIssueCommentOption })
  @ApiOkResponse({ type: CommentWire })
  @ApiNoContentResponse({ description: 'not a plain comment' })
  @ApiErrors(401, 403, 404, 422, 423)
  async editDeprecated(
    @TargetRepository() target: RepositoryTarget,
    @Param('index') index: string,
    @Param('id') id: string,
    @DeferredBody() body: LazyBody,
    @Res({ passthrough: true }) response: Response,
  ): Promise<CommentWire | undefined> {
    return orNoContent(response, await this.comments.edit(target, id, await bindOption(body, EditIssueCommentOption), index));
  }

  @Delete('repos/:owner/:repo/issues/:index/comments/:id')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a comment', deprecated: true })
  @ApiEmpty()
  @ApiErrors(401, 403, 404)
  async deleteDeprecated(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @Param('id') id: string): Promise<void> {
    await this.comments.delete(target, id, index);
  }
}
