import { Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, SiteAdmin } from '../auth/route-auth';
import { Body, DeferredBody, LazyBody, ReadsBody } from '../http/body-guard';
import { bindOption } from '../http/body-binding';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { toUserWire } from '../users/user.mapper';
import { UserWire } from '../users/user.wire';
import { toQuotaGroup, toQuotaInfo } from './quota.mapper';
import { CreateQuotaGroupOption, inlineRules, SetUserQuotaGroupsOption } from './quota.options';
import { QuotaGroupWire, QuotaInfoWire } from './quota.wire';
import { QuotaAdminService } from './quota-admin.service';
import { SiteUrls } from '../common/site-urls';

/** /admin/quota/groups and the per-user assignment (docs/quota.md); only while QUOTA_ENABLED. */
@ApiTags('admin')
@Controller()
export class QuotaGroupsController {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly quota: QuotaAdminService,
  ) {}

  @Get('admin/quota/groups')
  @SiteAdmin()
  @ApiOperation({ operationId: 'adminListQuotaGroups', summary: 'List the available quota groups' })
  @ApiPaging()
  @ApiOkResponse({ type: [QuotaGroupWire], description: 'QuotaGroupList' })
  async list(@Paging() page: PageQuery): Promise<PagedList<QuotaGroupWire>> {
    return pagedList(await this.quota.listGroups(page), page, (group) => toQuotaGroup(group, 'admin'));
  }

  @Post('admin/quota/groups')
  @SiteAdmin()
  @ApiOperation({ operationId: 'adminCreateQuotaGroup', summary: 'Create a new quota group' })
  @ApiCreatedResponse({ type: QuotaGroupWire })
  @ApiErrors(400, 409, 422)
  async create(@Body() option: CreateQuotaGroupOption): Promise<QuotaGroupWire> {
    const rules = inlineRules(option.rules);
    return toQuotaGroup(await this.quota.createGroup(option.name, rules), 'admin');
  }

  @Get('admin/quota/groups/:quotagroup')
  @SiteAdmin()
  @ApiOperation({ operationId: 'adminGetQuotaGroup', summary: 'Get information about the quota group' })
  @ApiOkResponse({ type: QuotaGroupWire })
  @ApiErrors(400, 404)
  async get(@Param('quotagroup') name: string): Promise<QuotaGroupWire> {
    return toQuotaGroup(await this.quota.getGroup(name), 'admin');
  }

  @Delete('admin/quota/groups/:quotagroup')
  @SiteAdmin()
  @HttpCode(204)
  @ApiOperation({ operationId: 'adminDeleteQuotaGroup', summary: 'Delete a quota group' })
  @ApiEmpty()
  @ApiErrors(400, 404)
  async delete(@Param('quotagroup') name: string): Promise<void> {
    await this.quota.deleteGroup(name);
  }

  @Put('admin/quota/groups/:quotagroup/rules/:quotarule')
  @SiteAdmin()
  @HttpCode(204)
  @ApiOperation({ operationId: 'adminAddRuleToQuotaGroup', summary: 'Adds a rule to a quota group' })
  @ApiEmpty()
  @ApiErrors(400, 404, 409)
  async addRule(@Param('quotagroup') group: string, @Param('quotarule') rule: string): Promise<void> {
    await this.quota.addRuleToGroup(group, rule);
  }

  @Delete('admin/quota/groups/:quotagroup/rules/:quotarule')
  @SiteAdmin()
  @HttpCode(204)
  @ApiOperation({ operationId: 'adminRemoveRuleFromQuotaGroup', summary: 'Removes a rule from a quota group' })
  @ApiEmpty()
  @ApiErrors(400, 404)
  async removeRule(@Param('quotagroup') group: string, @Param('quotarule') rule: string): Promise<void> {
    await this.quota.removeRuleFromGroup(group, rule);
  }

  @Get('admin/quota/groups/:quotagroup/users')
  @SiteAdmin()
  @ApiOperation({ operationId: 'adminListUsersInQuotaGroup', summary: 'List users in a quota group' })
  @ApiPaging()
  @ApiOkResponse({ type: [UserWire], description: 'UserList' })
  @ApiErrors(400, 404)
  async listUsers(@Caller() caller: AuthContext, @Param('quotagroup') group: string, @Paging() page: PageQuery): Promise<PagedList<UserWire>> {
    return pagedList(await this.quota.usersInGroup(group, page), page, (user) => toUserWire(user, caller, this.siteUrls));
  }

  @Put('admin/quota/groups/:quotagroup/users/:username')
  @SiteAdmin()
  @HttpCode(204)
  @ApiOperation({ operationId: 'adminAddUserToQuotaGroup', summary: 'Add a user to a quota group' })
  @ApiEmpty()
  @ApiErrors(400, 404, 409)
  async addUser(@Param('quotagroup') group: string, @Param('username') username: string): Promise<void> {
    await this.quota.addUserToGroup(group, username);
  }

  @Delete('admin/quota/groups/:quotagroup/users/:username')
  @SiteAdmin()
  @HttpCode(204)
  @ApiOperation({ operationId: 'adminRemoveUserFromQuotaGroup', summary: 'Remove a user from a quota group' })
  @ApiEmpty()
  @ApiErrors(400, 404)
  async removeUser(@Param('quotagroup') group: string, @Param('username') username: string): Promise<void> {
    await this.quota.removeUserFromGroup(group, username);
  }

  @Get('admin/users/:username/quota')
  @SiteAdmin()
  @ApiOperation({ operationId: 'adminGetUserQuota', summary: "Get the user's quota info" })
  @ApiOkResponse({ type: QuotaInfoWire })
  @ApiErrors(400, 404)
  async userQuota(@Param('username') username: string): Promise<QuotaInfoWire> {
    const state = await this.quota.userQuota(username);
    return toQuotaInfo(state.used, state.groups, 'admin');
  }

  @Post('admin/users/:username/quota/groups')
  @SiteAdmin()
  @ReadsBody({ deferred: true })
  @HttpCode(204)
  @ApiOperation({ operationId: 'adminSetUserQuotaGroups', summary: "Set the user's quota groups to a given list" })
  @ApiBody({ type: SetUserQuotaGroupsOption })
  @ApiEmpty()
  @ApiErrors(400, 404, 422)
  async setUserGroups(@Param('username') username: string, @DeferredBody() body: LazyBody): Promise<void> {
    // As Forgejo: the user (404) before the body (422).
    await this.quota.assertUserExists(username);
    await this.quota.setUserGroups(username, (await bindOption(body, SetUserQuotaGroupsOption)).groups);
  }
}
