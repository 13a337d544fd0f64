import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, Public, SignedIn } from '../auth/route-auth';
import { ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import type { UserEntity } from '../users/user.entity';
import { toQuotaInfo } from './quota.mapper';
import { QuotaInfoWire, QuotaUsedArtifactWire, QuotaUsedAttachmentWire, QuotaUsedPackageWire } from './quota.wire';
import { QuotaViewsService } from './quota-views.service';
import { queryString } from '../http/query';

const SUBJECT_QUERY = ApiQuery({ name: 'subject', required: true, type: String, description: 'subject of the quota' });
const CHECK_RESPONSE = ApiOkResponse({ type: Boolean, description: 'true when over quota for the subject: an action on it would be refused' });

/**
 * /user/quota… for the caller and /orgs/{org}/quota… for an organisation's owners (docs/quota.md), with the same
 * answers; group and rule names are not shown. Registered only while QUOTA_ENABLED is true.
 */
@Controller()
export class QuotaViewsController {
  constructor(private readonly quota: QuotaViewsService) {}

  @Get('user/quota')
  @SignedIn('user')
  @ApiTags('user')
  @ApiOperation({ operationId: 'userGetQuota', summary: 'Get quota information for the authenticated user' })
  @ApiOkResponse({ type: QuotaInfoWire })
  async userQuota(@Caller() caller: AuthContext): Promise<QuotaInfoWire> {
    return this.info(caller.user!);
  }

  @Get('user/quota/check')
  @SignedIn('user')
  @ApiTags('user')
  @ApiOperation({ operationId: 'userCheckQuota', summary: 'Check if the authenticated user is over quota for a given subject' })
  @SUBJECT_QUERY
  @CHECK_RESPONSE
  @ApiErrors(422)
  userCheck(@Caller() caller: AuthContext, @Query('subject') subject: unknown): Promise<boolean> {
    return this.quota.isOverQuota(caller.user!, queryString(subject) ?? '');
  }

  @Get('user/quota/attachments')
  @SignedIn('user')
  @ApiTags('user')
  @ApiOperation({ operationId: 'userListQuotaAttachments', summary: "List the attachments affecting the authenticated user's quota" })
  @ApiPaging()
  @ApiOkResponse({ type: [QuotaUsedAttachmentWire], description: 'QuotaUsedAttachmentList' })
  async userAttachments(@Caller() caller: AuthContext, @Paging() page: PageQuery): Promise<PagedList<QuotaUsedAttachmentWire>> {
    return pagedList(await this.quota.attachments(caller.user!, page), page, same);
  }

  @Get('user/quota/packages')
  @SignedIn('user')
  @ApiTags('user')
  @ApiOperation({ operationId: 'userListQuotaPackages', summary: "List the packages affecting the authenticated user's quota" })
  @ApiPaging()
  @ApiOkResponse({ type: [QuotaUsedPackageWire], description: 'QuotaUsedPackageList' })
  async userPackages(@Caller() caller: AuthContext, @Paging() page: PageQuery): Promise<PagedList<QuotaUsedPackageWire>> {
    return pagedList(await this.quota.packages(caller.user!, page), page, same);
  }

  @Get('user/quota/artifacts')
  @SignedIn('user')
  @ApiTags('user')
  @ApiOperation({ operationId: 'userListQuotaArtifacts', summary: "List the artifacts affecting the authenticated user's quota" })
  @ApiPaging()
  @ApiOkResponse({ type: [QuotaUsedArtifactWire], description: 'QuotaUsedArtifactList' })
  async userArtifacts(@Caller() caller: AuthContext, @Paging() page: PageQuery): Promise<PagedList<QuotaUsedArtifactWire>> {
    return pagedList(await this.quota.artifacts(caller.user!), page, same);
  }

  @Get('orgs/:org/quota')
  @Public('organization')
  @ApiTags('organization')
  @ApiOperation({ operationId: 'orgGetQuota', summary: 'Get quota information for an organization' })
  @ApiOkResponse({ type: QuotaInfoWire })
  @ApiErrors(404)
  async orgQuota(@Caller() caller: AuthContext, @Param('org') org: string): Promise<QuotaInfoWire> {
    return this.info(await this.quota.ownedOrganization(caller, org));
  }

  @Get('orgs/:org/quota/check')
  @Public('organization')
  @ApiTags('organization')
  @ApiOperation({ operationId: 'orgCheckQuota', summary: 'Check if the organization is over quota for a given subject' })
  @SUBJECT_QUERY
  @CHECK_RESPONSE
  @ApiErrors(404, 422)
  async orgCheck(@Caller() caller: AuthContext, @Param('org') org: string, @Query('subject') subject: unknown): Promise<boolean> {
    return this.quota.isOverQuota(await this.quota.ownedOrganization(caller, org), queryString(subject) ?? '');
  }

  @Get('orgs/:org/quota/attachments')
  @Public('organization')
  @ApiTags('organization')
  @ApiOperation({ operationId: 'orgListQuotaAttachments', summary: "List the attachments affecting the organization's quota" })
  @ApiPaging()
  @ApiOkResponse({ type: [QuotaUsedAttachmentWire], description: 'QuotaUsedAttachmentList' })
  @ApiErrors(404)
  async orgAttachments(@Caller() caller: AuthContext, @Param('org') org: string, @Paging() page: PageQuery): Promise<PagedList<QuotaUsedAttachmentWire>> {
    return pagedList(await this.quota.attachments(await this.quota.ownedOrganization(caller, org), page), page, same);
  }

  @Get('orgs/:org/quota/packages')
  @Public('organization')
  @ApiTags('organization')
  @ApiOperation({ operationId: 'orgListQuotaPackages', summary: "List the packages affecting the organization's quota" })
  @ApiPaging()
  @ApiOkResponse({ type: [QuotaUsedPackageWire], description: 'QuotaUsedPackageList' })
  @ApiErrors(404)
  async orgPackages(@Caller() caller: AuthContext, @Param('org') org: string, @Paging() page: PageQuery): Promise<PagedList<QuotaUsedPackageWire>> {
    return pagedList(await this.quota.packages(await this.quota.ownedOrganization(caller, org), page), page, same);
  }

  @Get('orgs/:org/quota/artifacts')
  @Public('organization')
  @ApiTags('organization')
  @ApiOperation({ operationId: 'orgListQuotaArtifacts', summary: "List the artifacts affecting the organization's quota" })
  @ApiPaging()
  @ApiOkResponse({ type: [QuotaUsedArtifactWire], description: 'QuotaUsedArtifactList' })
  @ApiErrors(404)
  async orgArtifacts(@Caller() caller: AuthContext, @Param('org') org: string, @Paging() page: PageQuery): Promise<PagedList<QuotaUsedArtifactWire>> {
    return pagedList(await this.quota.artifacts(await this.quota.ownedOrganization(caller, org)), page, same);
  }

  private async info(target: UserEntity): Promise<QuotaInfoWire> {
    const state = await this.quota.state(target);
    return toQuotaInfo(state.used, state.groups, 'owner');
  }
}

function same<T>(item: T): T {
  return item;
}
