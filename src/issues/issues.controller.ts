import { Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { RepositoryTarget } from '../access/repository-policy';
import type { AuthContext } from '../auth/auth-context';
import { AuthenticatedLater, Caller, Public, SignedIn } from '../auth/route-auth';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedWires, PageQuery, Paging } from '../common/paging';
import { bindOption } from '../http/body-binding';
import { DeferredBody, LazyBody, ReadsBody } from '../http/body-guard';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { CreateIssueOption, EditDeadlineOption, EditIssueOption } from './issue.options';
import { IssueDeadlineWire, IssueWire } from './issue.wire';
import { issueBodyLimit } from './issue-limits';
import { IssueParticipants } from './issue-participants';
import { IssuesService } from './issues.service';
import { IssueListsService } from './issue-lists.service';
import { IssueLabelsService } from './issue-labels.service';
import { IssueLabelsOption } from './issue-labels.options';
import { LabelWire } from '../labels/label.wire';
import { UserWire } from '../users/user.wire';

const LIST_QUERIES = [
  ApiQuery({ name: 'state', required: false, enum: ['closed', 'open', 'all'], description: 'whether issue is open or closed (open by default)' }),
  ApiQuery({ name: 'labels', required: false, type: String, description: 'comma separated list of label names; every one must be on the issue' }),
  ApiQuery({ name: 'q', required: false, type: String, description: 'search words: each must begin a word of the title or body' }),
  ApiQuery({ name: 'type', required: false, enum: ['issues', 'pulls'], description: 'filter by type (issues / pulls) if set' }),
  ApiQuery({ name: 'milestones', required: false, type: String, description: 'comma separated list of milestone names or ids' }),
  ApiQuery({ name: 'since', required: false, type: String, description: 'only issues updated at or after this time (RFC 3339)' }),
  ApiQuery({ name: 'before', required: false, type: String, description: 'only issues updated at or before this time (RFC 3339)' }),
];

function decorate(decorators: MethodDecorator[]): MethodDecorator {
  return (target, key, descriptor) => {
    for (const decorator of decorators) decorator(target, key, descriptor);
    return descriptor;
  };
}

/** The issue routes of one repository. Each resolves the repository (and the caller's access) once. */
@ApiTags('issue')
@Controller()
export class IssuesController {
  constructor(
    private readonly issues: IssuesService,
    private readonly lists: IssueListsService,
  ) {}

  @Get('repos/:owner/:repo/issues')
  @Public('issue')
  @RepositoryRoute({ unit: 'repo.issues' })
  @ApiOperation({ summary: "List a repository's issues" })
  @decorate(LIST_QUERIES)
  @ApiQuery({ name: 'created_by', required: false, type: String, description: 'Only show items which were created by the given user' })
  @ApiQuery({ name: 'assigned_by', required: false, type: String, description: 'Only show items for which the given user is assigned' })
  @ApiQuery({ name: 'mentioned_by', required: false, type: String, description: 'Only show items in which the given user was mentioned' })
  @ApiPaging()
  @ApiOkResponse({ type: [IssueWire], description: 'IssueList' })
  @ApiErrors(404, 422)
  async list(@TargetRepository() target: RepositoryTarget, @Query() query: Record<string, unknown>, @Paging() page: PageQuery): Promise<PagedList<IssueWire>> {
    return pagedWires(await this.lists.list(target, query, page), page);
  }

  @Post('repos/:owner/:repo/issues')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in', archived: 'refuse' })
  @ReadsBody({ deferred: true, limit: issueBodyLimit })
  @ApiOperation({ summary: 'Create an issue. If using deadline only the date will be taken into account, and time of day ignored.' })
  @ApiBody({ type: CreateIssueOption })
  @ApiCreatedResponse({ type: IssueWire })
  @ApiErrors(401, 403, 404, 412, 422, 423)
  async create(@TargetRepository() target: RepositoryTarget, @DeferredBody() body: LazyBody): Promise<IssueWire> {
    return this.issues.create(target, await bindOption(body, CreateIssueOption));
  }

  @Get('repos/:owner/:repo/issues/:index')
  @Public('issue')
  @RepositoryRoute({ unit: 'repo.issues' })
  @ApiOperation({ summary: 'Get an issue' })
  @ApiOkResponse({ type: IssueWire })
  @ApiErrors(404)
  get(@TargetRepository() target: RepositoryTarget, @Param('index') index: string): Promise<IssueWire> {
    return this.issues.get(target, index);
  }

  @Patch('repos/:owner/:repo/issues/:index')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in' })
  @ReadsBody({ deferred: true, limit: issueBodyLimit })
  @HttpCode(201)
  @ApiOperation({ summary: 'Edit an issue. If using deadline only the date will be taken into account, and time of day ignored.' })
  @ApiBody({ type: EditIssueOption })
  @ApiCreatedResponse({ type: IssueWire })
  @ApiErrors(401, 403, 404, 412, 422)
  async edit(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @DeferredBody() body: LazyBody): Promise<IssueWire> {
    return this.issues.edit(target, index, await bindOption(body, EditIssueOption));
  }

  @Delete('repos/:owner/:repo/issues/:index')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'admin' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete an issue' })
  @ApiEmpty()
  @ApiErrors(401, 403, 404)
  async delete(@TargetRepository() target: RepositoryTarget, @Param('index') index: string): Promise<void> {
    await this.issues.delete(target, index);
  }

  @Post('repos/:owner/:repo/issues/:index/deadline')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in' })
  @ReadsBody({ deferred: true })
  @ApiOperation({
    summary:
      'Set an issue deadline. If set to null, the deadline is deleted. If using deadline only the date will be taken into account, and time of day ignored.',
  })
  @ApiBody({ type: EditDeadlineOption })
  @ApiCreatedResponse({ type: IssueDeadlineWire })
  @ApiErrors(401, 403, 404, 422)
  async setDeadline(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @DeferredBody() body: LazyBody): Promise<IssueDeadlineWire> {
    return this.issues.setDeadline(target, index, await bindOption(body, EditDeadlineOption));
  }
}

/** The search across repositories: only issues of repositories the caller may read. */
@ApiTags('issue')
@Controller()
export class IssueSearchController {
  constructor(private readonly lists: IssueListsService) {}

  @Get('repos/issues/search')
  @Public('issue')
  @ApiOperation({ summary: 'Search for issues across the repositories that the user has access to' })
  @decorate(LIST_QUERIES)
  @ApiQuery({ name: 'owner', required: false, type: String, description: 'filter by owner' })
  @ApiQuery({ name: 'created', required: false, type: Boolean, description: 'filter (issues / pulls) created by you, default is false' })
  @ApiQuery({ name: 'assigned', required: false, type: Boolean, description: 'filter (issues / pulls) assigned to you, default is false' })
  @ApiQuery({ name: 'mentioned', required: false, type: Boolean, description: 'filter (issues / pulls) mentioning you, default is false' })
  @ApiPaging()
  @ApiOkResponse({ type: [IssueWire], description: 'IssueList' })
  @ApiErrors(400, 422)
  async search(@Caller() caller: AuthContext, @Query() query: Record<string, unknown>, @Paging() page: PageQuery): Promise<PagedList<IssueWire>> {
    return pagedWires(await this.lists.search(caller, query, page), page);
  }
}

/** The labels of one issue. */
@ApiTags('issue')
@Controller()
export class IssueLabelsController {
  constructor(private readonly labels: IssueLabelsService) {}

  @Get('repos/:owner/:repo/issues/:index/labels')
  @Public('issue')
  @RepositoryRoute({ unit: 'repo.issues' })
  @ApiOperation({ summary: "Get an issue's labels" })
  @ApiOkResponse({ type: [LabelWire], description: 'LabelList' })
  @ApiErrors(404)
  list(@TargetRepository() target: RepositoryTarget, @Param('index') index: string): Promise<LabelWire[]> {
    return this.labels.list(target, index);
  }

  @Post('repos/:owner/:repo/issues/:index/labels')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in' })
  @ReadsBody({ deferred: true })
  @HttpCode(200)
  @ApiOperation({ summary: 'Add a label to an issue' })
  @ApiBody({ type: IssueLabelsOption })
  @ApiOkResponse({ type: [LabelWire], description: 'LabelList' })
  @ApiErrors(400, 401, 403, 404, 422)
  async add(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @DeferredBody() body: LazyBody): Promise<LabelWire[]> {
    return this.labels.change(target, index, await bindOption(body, IssueLabelsOption), false);
  }

  @Put('repos/:owner/:repo/issues/:index/labels')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in' })
  @ReadsBody({ deferred: true })
  @ApiOperation({ summary: "Replace an issue's labels" })
  @ApiBody({ type: IssueLabelsOption })
  @ApiOkResponse({ type: [LabelWire], description: 'LabelList' })
  @ApiErrors(400, 401, 403, 404, 422)
  async replace(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @DeferredBody() body: LazyBody): Promise<LabelWire[]> {
    return this.labels.change(target, index, await bindOption(body, IssueLabelsOption), true);
  }

  @Delete('repos/:owner/:repo/issues/:index/labels')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove all labels from an issue' })
  @ApiEmpty()
  @ApiErrors(401, 403, 404)
  async clear(@TargetRepository() target: RepositoryTarget, @Param('index') index: string): Promise<void> {
    await this.labels.clear(target, index);
  }

  @Delete('repos/:owner/:repo/issues/:index/labels/:id')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove a label from an issue' })
  @ApiEmpty()
  @ApiErrors(401, 403, 404, 422)
  async remove(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @Param('id') id: string): Promise<void> {
    await this.labels.remove(target, index, id);
  }
}

/** Who may be assigned to a repository's issues. */
@ApiTags('repository')
@Controller()
export class AssigneesController {
  constructor(private readonly participants: IssueParticipants) {}

  @Get('repos/:owner/:repo/assignees')
  @SignedIn('repository')
  @RepositoryRoute()
  @ApiOperation({ summary: 'Return all users that have write access and can be assigned to issues' })
  @ApiOkResponse({ type: [UserWire], description: 'UserList' })
  @ApiErrors(404)
  list(@TargetRepository() target: RepositoryTarget): Promise<UserWire[]> {
    return this.participants.assignees(target);
  }
}
