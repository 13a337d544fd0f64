import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { Body } from '../common/body';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, Public, requireSignedIn, SignedIn } from '../auth/route-auth';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { CreateOrganizationOption } from './create-organization.option';
import { toOrganizationWire } from './organization.mapper';
import { OrganizationWire } from './organization.wire';
import { OrganizationsService } from './organizations.service';
import { toUserWire } from './user.mapper';
import { UserWire } from './user.wire';
import { UsersService } from './users.service';

/** /orgs routes (behaviour 10.4). Sign-in comes after the organisation lookup (1.6), so the service checks it. */
@ApiTags('organization')
@Controller()
export class OrganizationsController {
  constructor(
    private readonly organizations: OrganizationsService,
    private readonly users: UsersService,
  ) {}

  @Post('orgs')
  @SignedIn('organization')
  @ApiCreatedResponse({ type: OrganizationWire })
  @ApiErrors(400, 422)
  async create(@Caller() caller: AuthContext, @Body() option: CreateOrganizationOption): Promise<OrganizationWire> {
    requireSignedIn(caller);
    const org = await this.organizations.create(caller, {
      username: option.username,
      fullName: option.full_name,
      email: option.email,
      description: option.description,
      website: option.website,
      location: option.location,
      visibility: option.visibility,
      repoAdminChangeTeamAccess: option.repo_admin_change_team_access,
    });
    return toOrganizationWire(org, caller, this.users.site);
  }

  @Get('orgs/:org')
  @Public('organization')
  @ApiOkResponse({ type: OrganizationWire })
  @ApiErrors(404)
  async get(@Caller() caller: AuthContext, @Param('org') name: string): Promise<OrganizationWire> {
    return toOrganizationWire(await this.organizations.visibleByName(caller, name), caller, this.users.site);
  }

  @Delete('orgs/:org')
  @Public('organization')
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(404, 422)
  async delete(@Caller() caller: AuthContext, @Param('org') name: string): Promise<void> {
    await this.organizations.delete(caller, name);
  }

  @Get('orgs/:org/members')
  @Public('organization')
  @ApiPaging()
  @ApiOkResponse({ type: [UserWire], description: 'UserList' })
  @ApiErrors(404)
  async members(@Caller() caller: AuthContext, @Param('org') name: string, @Paging() page: PageQuery): Promise<PagedList<UserWire>> {
    const members = await this.organizations.members(caller, name, page);
    return pagedList(members, page, (user) => toUserWire(user, caller, this.users.site));
  }

  @Get('orgs/:org/members/:username')
  @Public('organization')
  @HttpCode(204)
  @ApiEmpty(204, 'the user is a member')
  @ApiErrors(404)
  async isMember(@Caller() caller: AuthContext, @Param('org') name: string, @Param('username') username: string): Promise<void> {
    await this.organizations.assertMember(caller, name, username);
  }

  @Delete('orgs/:org/members/:username')
  @Public('organization')
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(404, 422)
  async removeMember(@Caller() caller: AuthContext, @Param('org') name: string, @Param('username') username: string): Promise<void> {
    await this.organizations.removeMember(caller, name, username);
  }
}
