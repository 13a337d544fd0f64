import { Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, SignedIn } from '../auth/route-auth';
import { Body } from '../http/body-guard';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { parseKeyId } from '../keys/key-owners';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { CreateOAuth2ApplicationOptions } from './create-oauth2-application.option';
import { OAuth2ApplicationsService } from './oauth2-applications.service';
import { OAuth2ApplicationWire, toOAuth2ApplicationWire } from './oauth2-application.wire';

@ApiTags('user')
@Controller()
export class OAuth2ApplicationsController {
  constructor(private readonly applications: OAuth2ApplicationsService) {}

  @Get('user/applications/oauth2')
  @SignedIn('user')
  @ApiPaging()
  @ApiOkResponse({ type: [OAuth2ApplicationWire], description: 'OAuth2ApplicationList' })
  async list(@Caller() caller: AuthContext, @Paging() page: PageQuery): Promise<PagedList<OAuth2ApplicationWire>> {
    return pagedList(await this.applications.list(caller.user!, page), page, (application) => toOAuth2ApplicationWire(application));
  }

  @Post('user/applications/oauth2')
  @SignedIn('user')
  @ApiCreatedResponse({ type: OAuth2ApplicationWire })
  @ApiErrors(400, 422)
  async create(@Caller() caller: AuthContext, @Body() option: CreateOAuth2ApplicationOptions): Promise<OAuth2ApplicationWire> {
    const created = await this.applications.create(caller.user!, option);
    return toOAuth2ApplicationWire(created.application, created.secret);
  }

  @Get('user/applications/oauth2/:id')
  @SignedIn('user')
  @ApiOkResponse({ type: OAuth2ApplicationWire })
  @ApiErrors(404)
  async get(@Caller() caller: AuthContext, @Param('id') id: string): Promise<OAuth2ApplicationWire> {
    return toOAuth2ApplicationWire(await this.applications.get(caller.user!, parseKeyId(id)));
  }

  @Patch('user/applications/oauth2/:id')
  @SignedIn('user')
  @ApiOkResponse({ type: OAuth2ApplicationWire })
  @ApiErrors(404, 422)
  async update(@Caller() caller: AuthContext, @Param('id') id: string, @Body() option: CreateOAuth2ApplicationOptions): Promise<OAuth2ApplicationWire> {
    const updated = await this.applications.update(caller.user!, parseKeyId(id), option);
    return toOAuth2ApplicationWire(updated.application, updated.secret);
  }

  @Delete('user/applications/oauth2/:id')
  @SignedIn('user')
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(404)
  async delete(@Caller() caller: AuthContext, @Param('id') id: string): Promise<void> {
    await this.applications.delete(caller.user!, parseKeyId(id));
  }
}
