import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { Body } from '../http/body-guard';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, PasswordSignedIn, SignedIn } from '../auth/route-auth';
import { BadRequestError } from '../common/errors';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { AccessTokensService } from './access-tokens.service';
import { AccessTokenWire, toAccessTokenWire } from './access-token.wire';
import { CreateAccessTokenOption } from './create-access-token.option';
import { UsersService } from './users.service';
import { RateLimit } from '../http/rate-limits';

@ApiTags('user')
@Controller()
export class AccessTokensController {
  constructor(
    private readonly tokens: AccessTokensService,
    private readonly users: UsersService,
  ) {}

  @Get('users/:username/tokens')
  @SignedIn('user')
  @ApiPaging()
  @ApiOkResponse({ type: [AccessTokenWire], description: 'AccessTokenList' })
  @ApiErrors(404)
  async list(@Caller() caller: AuthContext, @Param('username') username: string, @Paging() page: PageQuery): Promise<PagedList<AccessTokenWire>> {
    const owner = await this.users.individualByName(username);
    this.tokens.assertMayManage(caller, owner);
    return pagedList(await this.tokens.list(owner, page), page, (token) => toAccessTokenWire(token));
  }

  @Post('users/:username/tokens')
  @PasswordSignedIn('user')
  @RateLimit('tokenCreation')
  @ApiCreatedResponse({ type: AccessTokenWire })
  @ApiErrors(400, 404, 422)
  async create(@Caller() caller: AuthContext, @Param('username') username: string, @Body() option: CreateAccessTokenOption): Promise<AccessTokenWire> {
    const owner = await this.users.individualByName(username);
    this.tokens.assertMayManage(caller, owner);
    if (option.repositories !== undefined && option.repositories !== null) {
      throw new BadRequestError('repository-specific tokens are not supported');
    }
    const created = await this.tokens.create(owner, option.name, option.scopes);
    return toAccessTokenWire(created.token, created.plaintext);
  }

  @Delete('users/:username/tokens/:token')
  @PasswordSignedIn('user')
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(404, 422)
  async delete(@Caller() caller: AuthContext, @Param('username') username: string, @Param('token') token: string): Promise<void> {
    const owner = await this.users.individualByName(username);
    this.tokens.assertMayManage(caller, owner);
    await this.tokens.delete(owner, token);
  }
}
