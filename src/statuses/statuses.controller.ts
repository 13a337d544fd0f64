import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { AuthenticatedLater, Public } from '../auth/route-auth';
import { bindOption } from '../http/body-binding';
import { DeferredBody, LazyBody, ReadsBody } from '../http/body-guard';
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
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.code', mode: 'write' })
  @ReadsBody({ deferred: true })
  @ApiOperation({ operationId: 'repoCreateStatus', summary: 'Create a commit status' })
  @ApiBody({ type: CreateStatusOption })
  @ApiCreatedResponse({ type: CommitStatusWire })
  @ApiErrors(400, 404, 422)
  async create(@TargetRepository() target: RepositoryTarget, @Param('sha') sha: string, @DeferredBody() body: LazyBody): Promise<CommitStatusWire> {
    return this.statuses.create(target, sha, await bindOption(body, CreateStatusOption));
  }

  @Get('repos/:owner/:repo/statuses/:sha')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ operationId: 'repoListStatuses', summary: "Get a commit's statuses" })
  @ApiQuery({ name: 'sort', required: false, enum: SORT_VALUES, description: 'type of sort' })
  @ApiQuery({ name: 'state', required: false, enum: STATE_VALUES, description: 'type of state' })
  @ApiPaging()
  @ApiOkResponse({ type: [CommitStatusWire] })
  @ApiErrors(400, 404)
  async list(
    @TargetRepository() target: RepositoryTarget,
    @Param('sha') sha: string,
    @Query() query: Record<string, unknown>,
    @Paging() page: PageQuery,
  ): Promise<PagedList<CommitStatusWire>> {
    const found = await this.statuses.list(target, sha, filterOf(query), page);
    return new PagedList(found.items, found.total, page);
  }

  @Get('repos/:owner/:repo/commits/:ref/statuses')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ operationId: 'repoListStatusesByRef', summary: "Get a commit's statuses, by branch/tag/commit reference" })
  @ApiQuery({ name: 'sort', required: false, enum: SORT_VALUES, description: 'type of sort' })
  @ApiQuery({ name: 'state', required: false, enum: STATE_VALUES, description: 'type of state' })
  @ApiPaging()
  @ApiOkResponse({ type: [CommitStatusWire] })
  @ApiErrors(400, 404)
  async listByRef(
    @TargetRepository() target: RepositoryTarget,
    @Param('ref') ref: string,
    @Query() query: Record<string, unknown>,
    @Paging() page: PageQuery,
  ): Promise<PagedList<CommitStatusWire>> {
    const found = await this.statuses.list(target, ref, filterOf(query), page);
    return new PagedList(found.items, found.total, page);
  }

  @Get('repos/:owner/:repo/commits/:ref/status')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ operationId: 'repoGetCombinedStatusByRef', summary: "Get a commit's combined status, by branch/tag/commit reference" })
  @ApiPaging()
  @ApiOkResponse({ type: CombinedStatusWire })
  @ApiErrors(400, 404)
  async combined(@TargetRepository() target: RepositoryTarget, @Param('ref') ref: string, @Paging() page: PageQuery): Promise<PagedList<CombinedStatusWire>> {
    const found = await this.statuses.combined(target, ref, page);
    return new PagedList([found.combined], found.total, page, (items) => items[0]);
  }
}

function filterOf(query: Record<string, unknown>): { state: string; sort: string } {
  return { state: typeof query.state === 'string' ? query.state : '', sort: typeof query.sort === 'string' ? query.sort : '' };
}
