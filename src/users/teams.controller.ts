import { Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, Public } from '../auth/route-auth';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { toTeamWire } from './organization.mapper';
import { OrganizationsService } from './organizations.service';
import { TeamWire } from './team.wire';

/** The Owners team of an organisation; sign-in is checked after the lookup (docs/check-order.md). */
@ApiTags('organization')
@Controller()
export class TeamsController {
  constructor(private readonly organizations: OrganizationsService) {}

  @Get('orgs/:org/teams')
  @Public('organization')
  @ApiPaging()
  @ApiOkResponse({ type: [TeamWire], description: 'TeamList' })
  @ApiErrors(404)
  async list(@Caller() caller: AuthContext, @Param('org') name: string, @Paging() page: PageQuery): Promise<PagedList<TeamWire>> {
    return pagedList(await this.organizations.teams(caller, name, page), page, toTeamWire);
  }

  @Put('teams/:id/members/:username')
  @Public('organization')
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(404)
  async addMember(@Caller() caller: AuthContext, @Param('id') id: string, @Param('username') username: string): Promise<void> {
    await this.organizations.addTeamMember(caller, id, username);
  }

  @Delete('teams/:id/members/:username')
  @Public('organization')
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(404, 422)
  async removeMember(@Caller() caller: AuthContext, @Param('id') id: string, @Param('username') username: string): Promise<void> {
    await this.organizations.removeTeamMember(caller, id, username);
  }
}
