import { Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, Public, SignedIn } from '../auth/route-auth';
import { Body } from '../http/body-guard';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { RepositoryAccess } from '../repos/repository-access';
import { RepositoryViews } from '../repos/repository-views';
import { RepositoryWire } from '../repos/repository.wire';
import { toOrganizationWire } from '../users/organization.mapper';
import { toUserWire } from '../users/user.mapper';
import { UserWire } from '../users/user.wire';
import { CreateTeamOption, EditTeamOption } from './create-team.option';
import { toTeamWire } from './team.mapper';
import { TeamSearchResultsWire, TeamWire } from './team.wire';
import { TeamOfOrganization, TeamsService } from './teams.service';
import { SiteUrls } from '../common/site-urls';

/**
 * Teams of organisations. Sign-in comes after the organisation or team lookup, so the routes are public and
 * the organisation policy (through the service) asks for it.
 */
@ApiTags('organization')
@Controller()
export class TeamsController {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly teams: TeamsService,
    private readonly views: RepositoryViews,
    private readonly access: RepositoryAccess,
  ) {}

  private withOrganization(caller: AuthContext, { team, org }: TeamOfOrganization): TeamWire {
    return toTeamWire(team, toOrganizationWire(org, caller, this.siteUrls));
  }

  @Get('orgs/:org/teams')
  @Public('organization')
  @ApiPaging()
  @ApiOkResponse({ type: [TeamWire], description: 'TeamList' })
  @ApiErrors(401, 403, 404)
  async list(@Caller() caller: AuthContext, @Param('org') org: string, @Paging() page: PageQuery): Promise<PagedList<TeamWire>> {
    return pagedList(await this.teams.listOfOrganization(caller, org, page), page, (team) => toTeamWire(team));
  }

  @Post('orgs/:org/teams')
  @Public('organization')
  @ApiCreatedResponse({ type: TeamWire })
  @ApiErrors(401, 403, 404, 422)
  async create(@Caller() caller: AuthContext, @Param('org') org: string, @Body() option: CreateTeamOption): Promise<TeamWire> {
    return this.withOrganization(caller, await this.teams.create(caller, org, option));
  }

  @Get('orgs/:org/teams/search')
  @Public('organization')
  @ApiPaging()
  @ApiQuery({ name: 'q', required: false, type: String, description: 'keywords to search' })
  @ApiQuery({ name: 'include_desc', required: false, type: Boolean, description: 'include search within team description (defaults to true)' })
  @ApiOkResponse({ type: TeamSearchResultsWire, description: 'SearchResults of a successful search' })
  @ApiErrors(401, 403, 404)
  async search(
    @Caller() caller: AuthContext,
    @Param('org') org: string,
    @Query('q') q: unknown,
    @Query('include_desc') includeDescription: unknown,
    @Paging() page: PageQuery,
  ): Promise<PagedList<TeamWire>> {
    const keyword = typeof q === 'string' ? q.trim() : '';
    const withDescription =
      typeof includeDescription !== 'string' || includeDescription === '' || includeDescription.toLowerCase() === 'true' || includeDescription === '1';
    const found = await this.teams.search(caller, org, keyword, withDescription, page);
    return pagedList(
      found,
      page,
      (team) => toTeamWire(team),
      (data) => ({ ok: true, data }),
    );
  }

  @Get('user/teams')
  @SignedIn('user')
  @ApiPaging()
  @ApiOkResponse({ type: [TeamWire], description: 'TeamList' })
  @ApiErrors(401)
  async listMine(@Caller() caller: AuthContext, @Paging() page: PageQuery): Promise<PagedList<TeamWire>> {
    return pagedList(await this.teams.listOfCaller(caller, page), page, (found) => this.withOrganization(caller, found));
  }

  @Get('teams/:id')
  @Public('organization')
  @ApiOkResponse({ type: TeamWire })
  @ApiErrors(401, 403, 404)
  async get(@Caller() caller: AuthContext, @Param('id') id: string): Promise<TeamWire> {
    return this.withOrganization(caller, await this.teams.get(caller, id));
  }

  @Patch('teams/:id')
  @Public('organization')
  @ApiOkResponse({ type: TeamWire })
  @ApiErrors(401, 403, 404, 422)
  async edit(@Caller() caller: AuthContext, @Param('id') id: string, @Body() option: EditTeamOption): Promise<TeamWire> {
    return toTeamWire((await this.teams.edit(caller, id, option)).team);
  }

  @Delete('teams/:id')
  @Public('organization')
  @HttpCode(204)
  @ApiEmpty(204, 'team deleted')
  @ApiErrors(401, 403, 404, 422)
  async delete(@Caller() caller: AuthContext, @Param('id') id: string): Promise<void> {
    await this.teams.delete(caller, id);
  }

  @Get('teams/:id/members')
  @Public('organization')
  @ApiPaging()
  @ApiOkResponse({ type: [UserWire], description: 'UserList' })
  @ApiErrors(401, 403, 404)
  async members(@Caller() caller: AuthContext, @Param('id') id: string, @Paging() page: PageQuery): Promise<PagedList<UserWire>> {
    return pagedList(await this.teams.members(caller, id, page), page, (user) => toUserWire(user, caller, this.siteUrls));
  }

  @Get('teams/:id/members/:username')
  @Public('organization')
  @ApiOkResponse({ type: UserWire })
  @ApiErrors(401, 403, 404)
  async member(@Caller() caller: AuthContext, @Param('id') id: string, @Param('username') username: string): Promise<UserWire> {
    return toUserWire(await this.teams.member(caller, id, username), caller, this.siteUrls);
  }

  @Put('teams/:id/members/:username')
  @Public('organization')
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(401, 403, 404)
  async addMember(@Caller() caller: AuthContext, @Param('id') id: string, @Param('username') username: string): Promise<void> {
    await this.teams.addMember(caller, id, username);
  }

  @Delete('teams/:id/members/:username')
  @Public('organization')
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(401, 403, 404, 422)
  async removeMember(@Caller() caller: AuthContext, @Param('id') id: string, @Param('username') username: string): Promise<void> {
    await this.teams.removeMember(caller, id, username);
  }

  @Get('teams/:id/repos')
  @Public('organization')
  @ApiPaging()
  @ApiOkResponse({ type: [RepositoryWire], description: 'RepositoryList' })
  @ApiErrors(401, 403, 404)
  async repositories(@Caller() caller: AuthContext, @Param('id') id: string, @Paging() page: PageQuery): Promise<PagedList<RepositoryWire>> {
    const found = await this.teams.repositories(caller, id, page);
    return pagedList(await this.views.page(found, caller, await this.access.of(caller)), page, (repo) => repo);
  }

  @Get('teams/:id/repos/:org/:repo')
  @Public('organization')
  @ApiOkResponse({ type: RepositoryWire })
  @ApiErrors(401, 403, 404)
  async repository(@Caller() caller: AuthContext, @Param('id') id: string, @Param('org') org: string, @Param('repo') repo: string): Promise<RepositoryWire> {
    const found = await this.teams.repository(caller, id, org, repo);
    return (await this.views.page({ items: [found], total: 1 }, caller, await this.access.of(caller))).items[0];
  }

  @Put('teams/:id/repos/:org/:repo')
  @Public('organization')
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(401, 403, 404)
  async addRepository(@Caller() caller: AuthContext, @Param('id') id: string, @Param('org') org: string, @Param('repo') repo: string): Promise<void> {
    await this.teams.addRepository(caller, id, org, repo);
  }

  @Delete('teams/:id/repos/:org/:repo')
  @Public('organization')
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(401, 403, 404)
  async removeRepository(@Caller() caller: AuthContext, @Param('id') id: string, @Param('org') org: string, @Param('repo') repo: string): Promise<void> {
    await this.teams.removeRepository(caller, id, org, repo);
  }
}
