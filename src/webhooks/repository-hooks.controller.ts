import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { AuthenticatedLater, Caller } from '../auth/route-auth';
import { Body } from '../http/body-guard';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, PageQuery, Paging } from '../common/paging';
import { CreateHookOption, EditHookOption } from './hook.options';
import { HookWire, WebhookDeliveryWire } from './hook.wire';
import { HooksService, REPOSITORY_HOOKS_REFUSED } from './hooks.service';

/** `/repos/{owner}/{repo}/hooks`: a repository's webhooks and their delivery history. */
@ApiTags('repository')
@Controller()
export class RepositoryHooksController {
  constructor(private readonly hooks: HooksService) {}

  @Get('repos/:owner/:repo/hooks')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin', message: REPOSITORY_HOOKS_REFUSED })
  @ApiOperation({ operationId: 'repoListHooks', summary: "List a repository's webhooks" })
  @ApiPaging()
  @ApiOkResponse({ type: [HookWire] })
  @ApiErrors(404)
  async list(@Caller() caller: AuthContext, @TargetRepository() target: RepositoryTarget, @Paging() page: PageQuery): Promise<PagedList<HookWire>> {
    const found = await this.hooks.list(caller, { kind: 'repository', target }, page);
    return new PagedList(found.items, found.total, page);
  }

  @Post('repos/:owner/:repo/hooks')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin', message: REPOSITORY_HOOKS_REFUSED })
  @ApiOperation({ operationId: 'repoCreateHook', summary: 'Create a hook' })
  @ApiBody({ type: CreateHookOption })
  @ApiCreatedResponse({ type: HookWire })
  @ApiErrors(404, 422)
  async create(@Caller() caller: AuthContext, @TargetRepository() target: RepositoryTarget, @Body() option: CreateHookOption): Promise<HookWire> {
    return this.hooks.create(await this.hooks.admit(caller, { kind: 'repository', target }), option);
  }

  @Get('repos/:owner/:repo/hooks/:id')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin', message: REPOSITORY_HOOKS_REFUSED })
  @ApiOperation({ operationId: 'repoGetHook', summary: 'Get a hook' })
  @ApiOkResponse({ type: HookWire })
  @ApiErrors(404)
  get(@Caller() caller: AuthContext, @TargetRepository() target: RepositoryTarget, @Param('id') id: string): Promise<HookWire> {
    return this.hooks.get(caller, { kind: 'repository', target }, Number(id));
  }

  @Patch('repos/:owner/:repo/hooks/:id')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin', message: REPOSITORY_HOOKS_REFUSED })
  @ApiOperation({ operationId: 'repoEditHook', summary: 'Edit a hook' })
  @ApiBody({ type: EditHookOption })
  @ApiOkResponse({ type: HookWire })
  @ApiErrors(404, 422)
  async edit(
    @Caller() caller: AuthContext,
    @TargetRepository() target: RepositoryTarget,
    @Param('id') id: string,
    @Body() option: EditHookOption,
  ): Promise<HookWire> {
    return this.hooks.edit(await this.hooks.admit(caller, { kind: 'repository', target }), Number(id), option);
  }

  @Delete('repos/:owner/:repo/hooks/:id')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin', message: REPOSITORY_HOOKS_REFUSED })
  @HttpCode(204)
  @ApiOperation({ operationId: 'repoDeleteHook', summary: 'Delete a hook' })
  @ApiEmpty()
  @ApiErrors(404)
  async delete(@Caller() caller: AuthContext, @TargetRepository() target: RepositoryTarget, @Param('id') id: string): Promise<void> {
    await this.hooks.delete(caller, { kind: 'repository', target }, Number(id));
  }

  @Post('repos/:owner/:repo/hooks/:id/tests')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin', message: REPOSITORY_HOOKS_REFUSED })
  @HttpCode(204)
  @ApiOperation({ operationId: 'repoTestHook', summary: 'Test a push webhook' })
  @ApiQuery({ name: 'ref', required: false, description: 'The name of the commit/branch/tag, indicates which commit will be loaded to the webhook payload.' })
  @ApiEmpty()
  @ApiErrors(404)
  async test(@Caller() caller: AuthContext, @TargetRepository() target: RepositoryTarget, @Param('id') id: string, @Query('ref') ref: unknown): Promise<void> {
    await this.hooks.test(caller, { kind: 'repository', target }, Number(id), typeof ref === 'string' ? ref : '');
  }

  @Get('repos/:owner/:repo/hooks/:id/deliveries')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin', message: REPOSITORY_HOOKS_REFUSED })
  @ApiOperation({ operationId: 'repositoryHooksListDeliveries', summary: "List a hook's deliveries, newest first" })
  @ApiPaging()
  @ApiOkResponse({ type: [WebhookDeliveryWire] })
  @ApiErrors(404)
  async deliveries(
    @Caller() caller: AuthContext,
    @TargetRepository() target: RepositoryTarget,
    @Param('id') id: string,
    @Paging() page: PageQuery,
  ): Promise<PagedList<WebhookDeliveryWire>> {
    const found = await this.hooks.deliveries(caller, { kind: 'repository', target }, Number(id), page);
    return new PagedList(found.items, found.total, page);
  }

  @Get('repos/:owner/:repo/hooks/:id/deliveries/:uuid')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin', message: REPOSITORY_HOOKS_REFUSED })
  @ApiOperation({ operationId: 'repositoryHooksGetDelivery', summary: 'Get one delivery of a hook' })
  @ApiOkResponse({ type: WebhookDeliveryWire })
  @ApiErrors(404)
  delivery(
    @Caller() caller: AuthContext,
    @TargetRepository() target: RepositoryTarget,
    @Param('id') id: string,
    @Param('uuid') uuid: string,
  ): Promise<WebhookDeliveryWire> {
    return this.hooks.delivery(caller, { kind: 'repository', target }, Number(id), uuid);
  }

  @Post('repos/:owner/:repo/hooks/:id/deliveries/:uuid/redeliver')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin', message: REPOSITORY_HOOKS_REFUSED })
  @ApiOperation({ operationId: 'repositoryHooksRedeliver', summary: "Send a delivery's event again, as a new delivery" })
  @ApiCreatedResponse({ type: WebhookDeliveryWire })
  @ApiErrors(404)
  redeliver(
    @Caller() caller: AuthContext,
    @TargetRepository() target: RepositoryTarget,
    @Param('id') id: string,
    @Param('uuid') uuid: string,
  ): Promise<WebhookDeliveryWire> {
    return this.hooks.redeliver(caller, { kind: 'repository', target }, Number(id), uuid);
  }
}
