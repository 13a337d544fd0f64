import { Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { SiteAdmin } from '../auth/route-auth';
import { Body, DeferredBody, LazyBody, ReadsBody } from '../http/body-guard';
import { bindOption } from '../http/body-binding';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { toQuotaRuleInfo } from './quota.mapper';
import { assertSubjects, CreateQuotaRuleOption, EditQuotaRuleOption } from './quota.options';
import { QuotaRuleInfoWire } from './quota.wire';
import { QuotaAdminService } from './quota-admin.service';

/** /admin/quota/rules (docs/quota.md); registered only while QUOTA_ENABLED is true. */
@ApiTags('admin')
@Controller()
export class QuotaRulesController {
  constructor(private readonly quota: QuotaAdminService) {}

  @Get('admin/quota/rules')
  @SiteAdmin()
  @ApiOperation({ operationId: 'adminListQuotaRules', summary: 'List the available quota rules' })
  @ApiPaging()
  @ApiOkResponse({ type: [QuotaRuleInfoWire], description: 'QuotaRuleInfoList' })
  async list(@Paging() page: PageQuery): Promise<PagedList<QuotaRuleInfoWire>> {
    return pagedList(await this.quota.listRules(page), page, (rule) => toQuotaRuleInfo(rule, 'admin'));
  }

  @Post('admin/quota/rules')
  @SiteAdmin()
  @ApiOperation({ operationId: 'adminCreateQuotaRule', summary: 'Create a new quota rule' })
  @ApiCreatedResponse({ type: QuotaRuleInfoWire })
  @ApiErrors(400, 409, 422)
  async create(@Body() option: CreateQuotaRuleOption): Promise<QuotaRuleInfoWire> {
    assertSubjects(option.subjects);
    const rule = await this.quota.createRule({ name: option.name, limit: option.limit, subjects: option.subjects ?? [] });
    return toQuotaRuleInfo(rule, 'admin');
  }

  @Get('admin/quota/rules/:quotarule')
  @SiteAdmin()
  @ApiOperation({ operationId: 'adminGetQuotaRule', summary: 'Get information about a quota rule' })
  @ApiOkResponse({ type: QuotaRuleInfoWire })
  @ApiErrors(400, 404)
  async get(@Param('quotarule') name: string): Promise<QuotaRuleInfoWire> {
    return toQuotaRuleInfo(await this.quota.getRule(name), 'admin');
  }

  @Patch('admin/quota/rules/:quotarule')
  @SiteAdmin()
  @ReadsBody({ deferred: true })
  @ApiOperation({ operationId: 'adminEditQuotaRule', summary: 'Change an existing quota rule' })
  @ApiBody({ type: EditQuotaRuleOption })
  @ApiOkResponse({ type: QuotaRuleInfoWire })
  @ApiErrors(400, 404, 422)
  async edit(@Param('quotarule') name: string, @DeferredBody() body: LazyBody): Promise<QuotaRuleInfoWire> {
    // As Forgejo: the rule (404) before the body (422).
    await this.quota.getRule(name);
    const option = await bindOption(body, EditQuotaRuleOption);
    assertSubjects(option.subjects);
    return toQuotaRuleInfo(await this.quota.editRule(name, { limit: option.limit ?? undefined, subjects: option.subjects ?? undefined }), 'admin');
  }

  @Delete('admin/quota/rules/:quotarule')
  @SiteAdmin()
  @HttpCode(204)
  @ApiOperation({ operationId: 'adminDeleteQuotaRule', summary: 'Deletes a quota rule' })
  @ApiEmpty()
  @ApiErrors(400, 404)
  async delete(@Param('quotarule') name: string): Promise<void> {
    await this.quota.deleteRule(name);
  }
}
