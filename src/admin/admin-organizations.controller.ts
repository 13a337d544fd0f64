import { Controller, Get, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, SiteAdmin } from '../auth/route-auth';
import { Body } from '../http/body-guard';
import { ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { CreateOrganizationOption } from '../users/create-organization.option';
import { organizationProfile } from '../users/edit-organization.option';
import { toOrganizationWire } from '../users/organization.mapper';
import { OrganizationWire } from '../users/organization.wire';
import { OrganizationsService } from '../users/organizations.service';
import { SiteUrls } from '../common/site-urls';

@ApiTags('admin')
@Controller()
export class AdminOrganizationsController {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly organizations: OrganizationsService,
  ) {}

  @Get('admin/orgs')
  @SiteAdmin()
  @ApiOperation({ summary: 'List all organizations' })
  @ApiPaging()
  @ApiOkResponse({ type: [OrganizationWire], description: 'OrganizationList' })
  async list(@Caller() caller: AuthContext, @Paging() page: PageQuery): Promise<PagedList<OrganizationWire>> {
    return pagedList(await this.organizations.listAll(page), page, (org) => toOrganizationWire(org, caller, this.siteUrls));
  }

  @Post('admin/users/:username/orgs')
  @SiteAdmin()
  @ApiOperation({ summary: 'Create an organization' })
  @ApiCreatedResponse({ type: OrganizationWire })
  @ApiErrors(404, 422)
  async create(@Caller() caller: AuthContext, @Param('username') username: string, @Body() option: CreateOrganizationOption): Promise<OrganizationWire> {
    const org = await this.organizations.createForUser(username, {
      username: option.username,
      ...organizationProfile(option),
    });
    return toOrganizationWire(org, caller, this.siteUrls);
  }
}
