import { Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { AuthenticatedLater, Caller } from '../auth/route-auth';
import { bindOption } from '../http/body-binding';
import { DeferredBody, LazyBody, ReadsBody } from '../http/body-guard';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, PageQuery, Paging } from '../common/paging';
import { CreateHookOption, EditHookOption } from './hook.options';
import { HookWire, WebhookDeliveryWire } from './hook.wire';
import { HooksService } from './hooks.service';

/** `/orgs/{org}/hooks`: an organization's webhooks and their delivery history. */
@ApiTags('organization')
@Controller()
export class OrganizationHooksController {
  constructor(private readonly hooks: HooksService) {}

  @Get('orgs/:org/hooks')
  @AuthenticatedLater('organization')
  @ApiOperation({ operationId: 'orgListHooks', summary: "List an organization's webhooks" })
  @ApiPaging()
  @ApiOkResponse({ type: [HookWire] })
  @ApiErrors(404)
  async list(@Caller() caller: AuthContext, @Param('org') org: string, @Paging() page: PageQuery): Promise<PagedList<HookWire>> {
    const found = await this.hooks.list(caller, { kind: 'organization', org }, page);
    return new PagedList(found.items, found.total, page);
  }

  @Post('orgs/:org/hooks')
  @AuthenticatedLater('organization')
  @ReadsBody({ deferred: true })
  @ApiOperation({ operationId: 'orgCreateHook', summary: 'Create a hook' })
  @ApiBody({ type: CreateHookOption })
  @ApiCreatedResponse({ type: HookWire })
  @ApiErrors(404, 422)
  async create(@Caller() caller: AuthContext, @Param('org') org: string, @DeferredBody() body: LazyBody): Promise<HookWire> {
    // As Forgejo: the organisation (404), sign-in (401) and its ownership (403) before the body (422).
    const place = await this.hooks.admit(caller, { kind: 'organization', org });
    return this.hooks.create(place, await bindOption(body, CreateHookOption));
  }

  @Get('orgs/:org/hooks/:id')
  @AuthenticatedLater('organization')
  @ApiOperation({ operationId: 'orgGetHook', summary: 'Get a hook' })
  @ApiOkResponse({ type: HookWire })
  @ApiErrors(404)
  get(@Caller() caller: AuthContext, @Param('org') org: string, @Param('id') id: string): Promise<HookWire> {
    return this.hooks.get(caller, { kind: 'organization', org }, Number(id));
  }

  @Patch('orgs/:org/hooks/:id')
  @AuthenticatedLater('organization')
  @ReadsBody({ deferred: true })
  @ApiOperation({ operationId: 'orgEditHook', summary: 'Edit a hook' })
  @ApiBody({ type: EditHookOption })
  @ApiOkResponse({ type: HookWire })
  @ApiErrors(404, 422)
  async edit(@Caller() caller: AuthContext, @Param('org') org: string, @Param('id') id: string, @DeferredBody() body: LazyBody): Promise<HookWire> {
    // As Forgejo: the organisation (404), sign-in (401) and its ownership (403) before the body (422), then the hook (404).
    const place = await this.hooks.admit(caller, { kind: 'organization', org });
    return this.hooks.edit(place, Number(id), await bindOption(body, EditHookOption));
  }

  @Delete('orgs/:org/hooks/:id')
  @AuthenticatedLater('organization')
  @HttpCode(204)
  @ApiOperation({ operationId: 'orgDeleteHook', summary: 'Delete a hook' })
  @ApiEmpty()
  @ApiErrors(404)
  async delete(@Caller() caller: AuthContext, @Param('org') org: string, @Param('id') id: string): Promise<void> {
    await this.hooks.delete(caller, { kind: 'organization', org }, Number(id));
  }

  @Get('orgs/:org/hooks/:id/deliveries')
  @AuthenticatedLater('organization')
  @ApiOperation({ operationId: 'organizationHooksListDeliveries', summary: "List a hook's deliveries, newest first" })
  @ApiPaging()
  @ApiOkResponse({ type: [WebhookDeliveryWire] })
  @ApiErrors(404)
  async deliveries(
    @Caller() caller: AuthContext,
    @Param('org') org: string,
    @Param('id') id: string,
    @Paging() page: PageQuery,
  ): Promise<PagedList<WebhookDeliveryWire>> {
    const found = await this.hooks.deliveries(caller, { kind: 'organization', org }, Number(id), page);
    return new PagedList(found.items, found.total, page);
  }

  @Get('orgs/:org/hooks/:id/deliveries/:uuid')
  @AuthenticatedLater('organization')
  @ApiOperation({ operationId: 'organizationHooksGetDelivery', summary: 'Get one delivery of a hook' })
  @ApiOkResponse({ type: WebhookDeliveryWire })
  @ApiErrors(404)
  delivery(@Caller() caller: AuthContext, @Param('org') org: string, @Param('id') id: string, @Param('uuid') uuid: string): Promise<WebhookDeliveryWire> {
    return this.hooks.delivery(caller, { kind: 'organization', org }, Number(id), uuid);
  }

  @Post('orgs/:org/hooks/:id/deliveries/:uuid/redeliver')
  @AuthenticatedLater('organization')
  @ApiOperation({ operationId: 'organizationHooksRedeliver', summary: "Send a delivery's event again, as a new delivery" })
  @ApiCreatedResponse({ type: WebhookDeliveryWire })
  @ApiErrors(404)
  redeliver(@Caller() caller: AuthContext, @Param('org') org: string, @Param('id') id: string, @Param('uuid') uuid: string): Promise<WebhookDeliveryWire> {
    return this.hooks.redeliver(caller, { kind: 'organization', org }, Number(id), uuid);
  }
}
