import { Controller, Delete, Get, HttpCode, Param, Patch, Post, Put } from '@nestjs/common';
import { Body } from '../http/body-guard';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, Public, requireSignedIn, SignedIn } from '../auth/route-auth';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { CreateOrganizationOption } from './create-organization.option';
import { toOrganizationWire } from './organization.mapper';
import { OrganizationPermissionsWire, OrganizationWire } from './organization.wire';
import { EditOrganizationOption, organizationProfile } from './edit-organization.option';
import { OrganizationsService } from './organizations.service';
import { toUserWire } from './user.mapper';
import { UserWire } from './user.wire';
import { SiteUrls } from '../common/site-urls';

/** /orgs routes. Sign-in comes after the organisation lookup (docs/check-order.md), so the service checks it. */
@ApiTags('organization')
@Controller()
export class OrganizationsController {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly organizations: OrganizationsService,
  ) {}

  @Post('orgs')
  @SignedIn('organization')
  @ApiCreatedResponse({ type: OrganizationWire })
  @ApiErrors(400, 422)
  async create(@Caller() caller: AuthContext, @Body() option: CreateOrganizationOption): Promise<OrganizationWire> {
    requireSignedIn(caller);
    const org = await this.organizations.create(caller, {
      username: option.username,
      ...organizationProfile(option),
    });
    return toOrganizationWire(org, caller, this.siteUrls);
  }

  @Get('orgs/:org')
  @Public('organization')
  @ApiOkResponse({ type: OrganizationWire })
  @ApiErrors(404)
  async get(@Caller() caller: AuthContext, @Param('org') name: string): Promise<OrganizationWire> {
    return toOrganizationWire(await this.organizations.visibleByName(caller, name), caller, this.siteUrls);
  }

  @Patch('orgs/:org')
  @Public('organization')
  @ApiOperation({ summary: 'Edit an organization' })
  @ApiOkResponse({ type: OrganizationWire })
  @ApiErrors(403, 404, 422)
  async edit(@Caller() caller: AuthContext, @Param('org') name: string, @Body() option: EditOrganizationOption): Promise<OrganizationWire> {
    const org = await this.organizations.edit(caller, name, organizationProfile(option));
    return toOrganizationWire(org, caller, this.siteUrls);
  }

  @Get('user/orgs')
  @SignedIn('user', 'organization')
  @ApiOperation({ summary: "List the current user's organizations" })
  @ApiPaging()
  @ApiOkResponse({ type: [OrganizationWire], description: 'OrganizationList' })
  async listMine(@Caller() caller: AuthContext, @Paging() page: PageQuery): Promise<PagedList<OrganizationWire>> {
    const orgs = await this.organizations.organizationsOf(caller, null, page);
    return pagedList(orgs, page, (org) => toOrganizationWire(org, caller, this.siteUrls));
  }

  @Get('users/:username/orgs')
  @SignedIn('user', 'organization')
  @ApiOperation({ summary: "List a user's organizations" })
  @ApiPaging()
  @ApiOkResponse({ type: [OrganizationWire], description: 'OrganizationList' })
  @ApiErrors(404)
  async listOfUser(@Caller() caller: AuthContext, @Param('username') username: string, @Paging() page: PageQuery): Promise<PagedList<OrganizationWire>> {
    const orgs = await this.organizations.organizationsOf(caller, username, page);
    return pagedList(orgs, page, (org) => toOrganizationWire(org, caller, this.siteUrls));
  }

  @Get('users/:username/orgs/:org/permissions')
  @SignedIn('user', 'organization')
  @ApiOperation({ summary: 'Get user permissions in organization' })
  @ApiOkResponse({ type: OrganizationPermissionsWire })
  @ApiErrors(404)
  async permissions(@Caller() caller: AuthContext, @Param('username') username: string, @Param('org') org: string): Promise<OrganizationPermissionsWire> {
    const granted = await this.organizations.permissionsOf(caller, username, org);
    return {
      is_owner: granted.isOwner,
      is_admin: granted.isAdmin,
      can_write: granted.canWrite,
      can_read: granted.canRead,
      can_create_repository: granted.canCreateRepository,
    };
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
    return pagedList(members, page, (user) => toUserWire(user, caller, this.siteUrls));
  }

  @Get('orgs/:org/members/:username')
  @Public('organization')
  @HttpCode(204)
  @ApiEmpty(204, 'user is a member')
  @ApiErrors(401, 404)
  async isMember(@Caller() caller: AuthContext, @Param('org') name: string, @Param('username') username: string): Promise<void> {
    await this.organizations.assertMember(caller, name, username);
  }

  @Get('orgs/:org/public_members')
  @Public('organization')
  @ApiPaging()
  @ApiOkResponse({ type: [UserWire], description: 'UserList' })
  @ApiErrors(404)
  async publicMembers(@Caller() caller: AuthContext, @Param('org') name: string, @Paging() page: PageQuery): Promise<PagedList<UserWire>> {
    const members = await this.organizations.publicMembers(caller, name, page);
    return pagedList(members, page, (user) => toUserWire(user, caller, this.siteUrls));
  }

  @Get('orgs/:org/public_members/:username')
  @Public('organization')
  @HttpCode(204)
  @ApiEmpty(204, 'user is a public member')
  @ApiErrors(404)
  async isPublicMember(@Caller() caller: AuthContext, @Param('org') name: string, @Param('username') username: string): Promise<void> {
    await this.organizations.assertPublicMember(caller, name, username);
  }

  @Put('orgs/:org/public_members/:username')
  @Public('organization')
  @HttpCode(204)
  @ApiEmpty(204, 'membership publicized')
  @ApiErrors(401, 403, 404)
  async publicize(@Caller() caller: AuthContext, @Param('org') name: string, @Param('username') username: string): Promise<void> {
    await this.organizations.setMembershipPublic(caller, name, username, true);
  }

  @Delete('orgs/:org/public_members/:username')
  @Public('organization')
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(401, 403, 404)
  async conceal(@Caller() caller: AuthContext, @Param('org') name: string, @Param('username') username: string): Promise<void> {
    await this.organizations.setMembershipPublic(caller, name, username, false);
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
