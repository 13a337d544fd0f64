import { Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, SiteAdmin } from '../auth/route-auth';
import { Body } from '../http/body-guard';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, PageQuery, Paging } from '../common/paging';
import { CreateHookOption, EditHookOption } from './hook.options';
import { HookWire, WebhookDeliveryWire } from './hook.wire';
import { HooksService } from './hooks.service';

/** `/admin/hooks`: the system's webhooks and their delivery history. */
@ApiTags('admin')
@Controller()
export class SystemHooksController {
  constructor(private readonly hooks: HooksService) {}

  @Get('admin/hooks')
  @SiteAdmin()
  @ApiOperation({ operationId: 'adminListHooks', summary: "List the system's webhooks" })
  @ApiPaging()
  @ApiOkResponse({ type: [HookWire] })
  @ApiErrors(404)
  async list(@Caller() caller: AuthContext, @Paging() page: PageQuery): Promise<PagedList<HookWire>> {
    const found = await this.hooks.list(caller, { kind: 'system' }, page);
    return new PagedList(found.items, found.total, page);
  }

  @Post('admin/hooks')
  @SiteAdmin()
  @ApiOperation({ operationId: 'adminCreateHook', summary: 'Create a hook' })
  @ApiBody({ type: CreateHookOption })
  @ApiCreatedResponse({ type: HookWire })
  @ApiErrors(404, 422)
  async create(@Caller() caller: AuthContext, @Body() option: CreateHookOption): Promise<HookWire> {
    return this.hooks.create(await this.hooks.admit(caller, { kind: 'system' }), option);
  }

  @Get('admin/hooks/:id')
  @SiteAdmin()
  @ApiOperation({ operationId: 'adminGetHook', summary: 'Get a hook' })
  @ApiOkResponse({ type: HookWire })
  @ApiErrors(404)
  get(@Caller() caller: AuthContext, @Param('id') id: string): Promise<HookWire> {
    return this.hooks.get(caller, { kind: 'system' }, Number(id));
  }

  @Patch('admin/hooks/:id')
  @SiteAdmin()
  @ApiOperation({ operationId: 'adminEditHook', summary: 'Edit a hook' })
  @ApiBody({ type: EditHookOption })
  @ApiOkResponse({ type: HookWire })
  @ApiErrors(404, 422)
  async edit(@Caller() caller: AuthContext, @Param('id') id: string, @Body() option: EditHookOption): Promise<HookWire> {
    return this.hooks.edit(await this.hooks.admit(caller, { kind: 'system' }), Number(id), option);
  }

  @Delete('admin/hooks/:id')
  @SiteAdmin()
  @HttpCode(204)
  @ApiOperation({ operationId: 'adminDeleteHook', summary: 'Delete a hook' })
  @ApiEmpty()
  @ApiErrors(404)
  async delete(@Caller() caller: AuthContext, @Param('id') id: string): Promise<void> {
    await this.hooks.delete(caller, { kind: 'system' }, Number(id));
  }

  @Get('admin/hooks/:id/deliveries')
  @SiteAdmin()
  @ApiOperation({ operationId: 'systemHooksListDeliveries', summary: "List a hook's deliveries, newest first" })
  @ApiPaging()
  @ApiOkResponse({ type: [WebhookDeliveryWire] })
  @ApiErrors(404)
  async deliveries(@Caller() caller: AuthContext, @Param('id') id: string, @Paging() page: PageQuery): Promise<PagedList<WebhookDeliveryWire>> {
    const found = await this.hooks.deliveries(caller, { kind: 'system' }, Number(id), page);
    return new PagedList(found.items, found.total, page);
  }

  @Get('admin/hooks/:id/deliveries/:uuid')
  @SiteAdmin()
  @ApiOperation({ operationId: 'systemHooksGetDelivery', summary: 'Get one delivery of a hook' })
  @ApiOkResponse({ type: WebhookDeliveryWire })
  @ApiErrors(404)
  delivery(@Caller() caller: AuthContext, @Param('id') id: string, @Param('uuid') uuid: string): Promise<WebhookDeliveryWire> {
    return this.hooks.delivery(caller, { kind: 'system' }, Number(id), uuid);
  }

  @Post('admin/hooks/:id/deliveries/:uuid/redeliver')
  @SiteAdmin()
  @ApiOperation({ operationId: 'systemHooksRedeliver', summary: "Send a delivery's event again, as a new delivery" })
  @ApiCreatedResponse({ type: WebhookDeliveryWire })
  @ApiErrors(404)
  redeliver(@Caller() caller: AuthContext, @Param('id') id: string, @Param('uuid') uuid: string): Promise<WebhookDeliveryWire> {
    return this.hooks.redeliver(caller, { kind: 'system' }, Number(id), uuid);
  }
}
