import { Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { RepositoryTarget } from '../access/repository-policy';
import { AuthenticatedLater, Public } from '../auth/route-auth';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { bindOption } from '../http/body-binding';
import { DeferredBody, LazyBody, ReadsBody } from '../http/body-guard';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { toMilestoneWire } from './milestone.mapper';
import { CreateMilestoneOption, EditMilestoneOption } from './milestone.options';
import { MilestoneWire } from './milestone.wire';
import { MILESTONE_WRITE_REFUSED, MilestonesService } from './milestones.service';

function firstString(value: unknown): string {
  return typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : '';
}

/** The milestones of one repository, by id or by title. */
@ApiTags('issue')
@Controller()
export class MilestonesController {
  constructor(private readonly milestones: MilestonesService) {}

  @Get('repos/:owner/:repo/milestones')
  @Public('issue')
  @RepositoryRoute()
  @ApiOperation({ summary: "Get all of a repository's opened milestones" })
  @ApiQuery({ name: 'state', required: false, type: String, description: 'Milestone state, Recognized values are open, closed and all. Defaults to "open"' })
  @ApiQuery({ name: 'name', required: false, type: String, description: 'filter by milestone name' })
  @ApiPaging()
  @ApiOkResponse({ type: [MilestoneWire], description: 'MilestoneList' })
  @ApiErrors(404)
  async list(
    @TargetRepository() target: RepositoryTarget,
    @Query('state') state: unknown,
    @Query('name') name: unknown,
    @Paging() page: PageQuery,
  ): Promise<PagedList<MilestoneWire>> {
    return pagedList(await this.milestones.list(target, firstString(state), firstString(name), page), page, toMilestoneWire);
  }

  @Post('repos/:owner/:repo/milestones')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ mode: 'write', writes: ['repo.issues', 'repo.pulls'], message: MILESTONE_WRITE_REFUSED, archived: 'accept' })
  @ReadsBody({ deferred: true })
  @ApiOperation({ summary: 'Create a milestone' })
  @ApiBody({ type: CreateMilestoneOption })
  @ApiCreatedResponse({ type: MilestoneWire })
  @ApiErrors(401, 403, 404, 422)
  async create(@TargetRepository() target: RepositoryTarget, @DeferredBody() body: LazyBody): Promise<MilestoneWire> {
    return toMilestoneWire(await this.milestones.create(target, await bindOption(body, CreateMilestoneOption)));
  }

  @Get('repos/:owner/:repo/milestones/:id')
  @Public('issue')
  @RepositoryRoute()
  @ApiOperation({ summary: 'Get a milestone' })
  @ApiOkResponse({ type: MilestoneWire })
  @ApiErrors(404)
  async get(@TargetRepository() target: RepositoryTarget, @Param('id') id: string): Promise<MilestoneWire> {
    return toMilestoneWire(await this.milestones.get(target, id));
  }

  @Patch('repos/:owner/:repo/milestones/:id')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ mode: 'write', writes: ['repo.issues', 'repo.pulls'], message: MILESTONE_WRITE_REFUSED, archived: 'accept' })
  @ReadsBody({ deferred: true })
  @ApiOperation({ summary: 'Update a milestone' })
  @ApiBody({ type: EditMilestoneOption })
  @ApiOkResponse({ type: MilestoneWire })
  @ApiErrors(401, 403, 404, 422)
  async edit(@TargetRepository() target: RepositoryTarget, @Param('id') id: string, @DeferredBody() body: LazyBody): Promise<MilestoneWire> {
    return toMilestoneWire(await this.milestones.edit(target, id, await bindOption(body, EditMilestoneOption)));
  }

  @Delete('repos/:owner/:repo/milestones/:id')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ mode: 'write', writes: ['repo.issues', 'repo.pulls'], message: MILESTONE_WRITE_REFUSED, archived: 'accept' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a milestone' })
  @ApiEmpty()
  @ApiErrors(401, 403, 404)
  async delete(@TargetRepository() target: RepositoryTarget, @Param('id') id: string): Promise<void> {
    await this.milestones.delete(target, id);
  }
}
