import { Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, Public } from '../auth/route-auth';
import { bindOption, DeferredBody, LazyBody, ReadsBody } from '../common/body';
import { ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, PageQuery, Paging } from '../common/paging';
import { CombinedStatusWire, CommitStatusWire } from './commit-status.wire';
import { CreateStatusOption } from './create-status.option';
import { StatusesService } from './statuses.service';

const SORT_VALUES = ['oldest', 'recentupdate', 'leastupdate', 'leastindex', 'highestindex'];
const STATE_VALUES = ['pending', 'success', 'error', 'failure', 'warning'];

/** Commit statuses: what CI reports about a commit, and the combined state of a ref. */
@ApiTags('repository')
@Controller()
export class StatusesController {
  constructor(private readonly statuses: StatusesService) {}

  @Post('repos/:owner/:repo/statuses/:sha')
  @Public('repository')
  @ReadsBody({ deferred: true })
  @ApiOperation({ operationId: 'repoCreateStatus', summary: 'Create a commit status' })
  @ApiBody({ type: CreateStatusOption })
  @ApiCreatedResponse({ type: CommitStatusWire })
  @ApiErrors(400, 404, 422)
  create(@Caller() caller: AuthContext, @Param('owner') owner: string, @Param('repo') repo: string, @Param('sha') sha: string, @DeferredBody() body: LazyBody): Promise<CommitStatusWire> {
    return this.statuses.create(caller, owner, repo, sha, () => bindOption(body, CreateStatusOption));
  }

  @Get('repos/:owner/:repo/statuses/:sha')
  @Public('repository')
  @ApiOperation({ operationId: 'repoListStatuses', summary: "Get a commit's statuses" })
  @ApiQuery({ name: 'sort', required: false, enum: SORT_VALUES, description: 'type of sort' })
  @ApiQuery({ name: 'state', required: false, enum: STATE_VALUES, description: 'type of state' })
  @ApiPaging()
  @ApiOkResponse({ type: [CommitStatusWire] })
  @ApiErrors(400, 404)
  async list(@Caller() caller: AuthContext, @Param('owner') owner: string, @Param('repo') repo: string, @Param('sha') sha: string, @Query() query: Record<string, unknown>, @Paging() page: PageQuery): Promise<PagedList<CommitStatusWire>> {
    const found = await this.statuses.list(caller, owner, repo, sha, filterOf(query), page);
    return new PagedList(found.items, found.total, page);
  }

  @Get('repos/:owner/:repo/commits/:ref/statuses')
  @Public('repository')
  @ApiOperation({ operationId: 'repoListStatusesByRef', summary: "Get a commit's statuses, by branch/tag/commit reference" })
  @ApiQuery({ name: 'sort', required: false, enum: SORT_VALUES, description: 'type of sort' })
  @ApiQuery({ name: 'state', required: false, enum: STATE_VALUES, description: 'type of state' })
  @ApiPaging()
  @ApiOkResponse({ type: [CommitStatusWire] })
  @ApiErrors(400, 404)
  async listByRef(@Caller() caller: AuthContext, @Param('owner') owner: string, @Param('repo') repo: string, @Param('ref') ref: string, @Query() query: Record<string, unknown>, @Paging() page: PageQuery): Promise<PagedList<CommitStatusWire>> {
    const found = await this.statuses.list(caller, owner, repo, ref, filterOf(query), page);
    return new PagedList(found.items, found.total, page);
  }

  @Get('repos/:owner/:repo/commits/:ref/status')
  @Public('repository')
  @ApiOperation({ operationId: 'repoGetCombinedStatusByRef', summary: "Get a commit's combined status, by branch/tag/commit reference" })
  @ApiPaging()
  @ApiOkResponse({ type: CombinedStatusWire })
  @ApiErrors(400, 404)
  async combined(@Caller() caller: AuthContext, @Param('owner') owner: string, @Param('repo') repo: string, @Param('ref') ref: string, @Paging() page: PageQuery): Promise<PagedList<CombinedStatusWire>> {
    const found = await this.statuses.combined(caller, owner, repo, ref, page);
    return new PagedList([found.combined], found.total, page, (items) => items[0]);
  }
}

function filterOf(query: Record<string, unknown>): { state: string; sort: string } {
  return { state: typeof query.state === 'string' ? query.state : '', sort: typeof query.sort === 'string' ? query.sort : '' };
}
