import { Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, Public } from '../auth/route-auth';
import { Body } from '../http/body-guard';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { RepositoryViews } from '../repos/repository-views';
import { RepositoryAccess } from '../repos/repository-access';
import { RepositoryWire } from '../repos/repository.wire';
import { toTeamWire } from '../users/organization.mapper';
import { TeamWire } from '../users/team.wire';
import { CreateTeamOption } from './create-team.option';
import { TeamsService } from './teams.service';

@ApiTags('organization')
@Controller()
export class TeamRepositoriesController {
  constructor(
    private readonly teams: TeamsService,
    private readonly views: RepositoryViews,
    private readonly access: RepositoryAccess,
  ) {}

  @Post('orgs/:org/teams')
  @Public('organization')
  @ApiCreatedResponse({ type: TeamWire })
  @ApiErrors(403, 404, 422)
  async create(@Caller() caller: AuthContext, @Param('org') org: string, @Body() option: CreateTeamOption): Promise<TeamWire> {
    return toTeamWire(await this.teams.create(caller, org, option));
  }

  @Get('teams/:id/repos')
  @Public('organization')
  @ApiPaging()
  @ApiOkResponse({ type: [RepositoryWire], description: 'RepositoryList' })
  @ApiErrors(404)
  async repositories(@Caller() caller: AuthContext, @Param('id') id: string, @Paging() page: PageQuery): Promise<PagedList<RepositoryWire>> {
    const found = await this.teams.repositoriesOf(caller, id, page);
    return pagedList(await this.views.page(found, caller, await this.access.of(caller)), page, (repo) => repo);
  }

  @Put('teams/:id/repos/:org/:repo')
  @Public('organization')
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(403, 404)
  async addRepository(@Caller() caller: AuthContext, @Param('id') id: string, @Param('org') org: string, @Param('repo') repo: string): Promise<void> {
    await this.teams.addRepository(caller, id, org, repo);
  }

  @Delete('teams/:id/repos/:org/:repo')
  @Public('organization')
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(403, 404)
  async removeRepository(@Caller() caller: AuthContext, @Param('id') id: string, @Param('org') org: string, @Param('repo') repo: string): Promise<void> {
    await this.teams.removeRepository(caller, id, org, repo);
  }
}
