import { Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, SignedIn } from '../auth/route-auth';
import { Body } from '../http/body-guard';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, PageQuery, Paging } from '../common/paging';
import { CreateHookOption, EditHookOption } from './hook.options';
import { HookWire, WebhookDeliveryWire } from './hook.wire';
import { HooksService } from './hooks.service';

/** `/user/hooks`: the authenticated user's webhooks and their delivery history. */
@ApiTags('user')
@Controller()
export class UserHooksController {
  constructor(private readonly hooks: HooksService) {}

  @Get('user/hooks')
  @SignedIn('user')
  @ApiOperation({ operationId: 'userListHooks', summary: "List the authenticated user's webhooks" })
  @ApiPaging()
  @ApiOkResponse({ type: [HookWire] })
  @ApiErrors(404)
  async list(@Caller() caller: AuthContext, @Paging() page: PageQuery): Promise<PagedList<HookWire>> {
    const found = await this.hooks.list(caller, { kind: 'user' }, page);
    return new PagedList(found.items, found.total, page);
  }

  @Post('user/hooks')
  @SignedIn('user')
  @ApiOperation({ operationId: 'userCreateHook', summary: 'Create a hook' })
  @ApiBody({ type: CreateHookOption })
  @ApiCreatedResponse({ type: HookWire })
  @ApiErrors(404, 422)
  async create(@Caller() caller: AuthContext, @Body() option: CreateHookOption): Promise<HookWire> {
    return this.hooks.create(await this.hooks.admit(caller, { kind: 'user' }), option);
  }

  @Get('user/hooks/:id')
  @SignedIn('user')
  @ApiOperation({ operationId: 'userGetHook', summary: 'Get a hook' })
  @ApiOkResponse({ type: HookWire })
  @ApiErrors(404)
  get(@Caller() caller: AuthContext, @Param('id') id: string): Promise<HookWire> {
    return this.hooks.get(caller, { kind: 'user' }, Number(id));
  }

  @Patch('user/hooks/:id')
  @SignedIn('user')
  @ApiOperation({ operationId: 'userEditHook', summary: 'Edit a hook' })
  @ApiBody({ type: EditHookOption })
  @ApiOkResponse({ type: HookWire })
  @ApiErrors(404, 422)
  async edit(@Caller() caller: AuthContext, @Param('id') id: string, @Body() option: EditHookOption): Promise<HookWire> {
    return this.hooks.edit(await this.hooks.admit(caller, { kind: 'user' }), Number(id), option);
  }

  @Delete('user/hooks/:id')
  @SignedIn('user')
  @HttpCode(204)
  @ApiOperation({ operationId: 'userDeleteHook', summary: 'Delete a hook' })
  @ApiEmpty()
  @ApiErrors(404)
  async delete(@Caller() caller: AuthContext, @Param('id') id: string): Promise<void> {
    await this.hooks.delete(caller, { kind: 'user' }, Number(id));
  }

  @Get('user/hooks/:id/deliveries')
  @SignedIn('user')
  @ApiOperation({ operationId: 'userHooksListDeliveries', summary: "List a hook's deliveries, newest first" })
  @ApiPaging()
  @ApiOkResponse({ type: [WebhookDeliveryWire] })
  @ApiErrors(404)
  async deliveries(@Caller() caller: AuthContext, @Param('id') id: string, @Paging() page: PageQuery): Promise<PagedList<WebhookDeliveryWire>> {
    const found = await this.hooks.deliveries(caller, { kind: 'user' }, Number(id), page);
    return new PagedList(found.items, found.total, page);
  }

  @Get('user/hooks/:id/deliveries/:uuid')
  @SignedIn('user')
  @ApiOperation({ operationId: 'userHooksGetDelivery', summary: 'Get one delivery of a hook' })
  @ApiOkResponse({ type: WebhookDeliveryWire })
  @ApiErrors(404)
  delivery(@Caller() caller: AuthContext, @Param('id') id: string, @Param('uuid') uuid: string): Promise<WebhookDeliveryWire> {
    return this.hooks.delivery(caller, { kind: 'user' }, Number(id), uuid);
  }

  @Post('user/hooks/:id/deliveries/:uuid/redeliver')
  @SignedIn('user')
  @ApiOperation({ operationId: 'userHooksRedeliver', summary: "Send a delivery's event again, as a new delivery" })
  @ApiCreatedResponse({ type: WebhookDeliveryWire })
  @ApiErrors(404)
  redeliver(@Caller() caller: AuthContext, @Param('id') id: string, @Param('uuid') uuid: string): Promise<WebhookDeliveryWire> {
    return this.hooks.redeliver(caller, { kind: 'user' }, Number(id), uuid);
  }
}
