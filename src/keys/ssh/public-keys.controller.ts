import { Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { Body } from '../../http/body-guard';
import { ApiCreatedResponse, ApiOkResponse, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../../auth/auth-context';
import { Caller, SignedIn } from '../../auth/route-auth';
import { ApiEmpty, ApiErrors } from '../../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../../common/paging';
import { parseKeyId } from '../key-owners';
import { CreateKeyOption } from './create-key.option';
import { PublicKeyWire, toPublicKeyWire } from './public-key.wire';
import { PublicKeysService } from './public-keys.service';
import { RateLimit } from '../../http/rate-limits';
import { queryString } from '../../http/query';
import { SiteUrls } from '../../common/site-urls';

const FINGERPRINT_QUERY = ApiQuery({ name: 'fingerprint', required: false, type: String, description: 'fingerprint of the key' });

@ApiTags('user')
@Controller()
export class PublicKeysController {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly keys: PublicKeysService,
  ) {}

  @Get('user/keys')
  @SignedIn('user')
  @FINGERPRINT_QUERY
  @ApiPaging()
  @ApiOkResponse({ type: [PublicKeyWire], description: 'PublicKeyList' })
  async listMine(@Caller() caller: AuthContext, @Paging() page: PageQuery, @Query('fingerprint') fingerprint?: unknown): Promise<PagedList<PublicKeyWire>> {
    const found = await this.keys.listForCaller(caller.user!, page, queryString(fingerprint) || undefined);
    return pagedList(found, page, (item) => toPublicKeyWire(item, caller, this.siteUrls));
  }

  @Post('user/keys')
  @SignedIn('user')
  @RateLimit('keyUpload')
  @ApiCreatedResponse({ type: PublicKeyWire })
  @ApiErrors(422)
  async create(@Caller() caller: AuthContext, @Body() option: CreateKeyOption): Promise<PublicKeyWire> {
    return toPublicKeyWire(await this.keys.create(caller.user!, option.title, option.key), caller, this.siteUrls);
  }

  @Get('user/keys/:id')
  @SignedIn('user')
  @ApiOkResponse({ type: PublicKeyWire })
  @ApiErrors(404)
  async get(@Caller() caller: AuthContext, @Param('id') id: string): Promise<PublicKeyWire> {
    return toPublicKeyWire(await this.keys.get(caller, parseKeyId(id)), caller, this.siteUrls);
  }

  @Delete('user/keys/:id')
  @SignedIn('user')
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(404)
  async delete(@Caller() caller: AuthContext, @Param('id') id: string): Promise<void> {
    await this.keys.delete(caller, parseKeyId(id));
  }

  @Get('users/:username/keys')
  @SignedIn('user')
  @FINGERPRINT_QUERY
  @ApiPaging()
  @ApiOkResponse({ type: [PublicKeyWire], description: 'PublicKeyList' })
  @ApiErrors(404)
  async listOfUser(
    @Caller() caller: AuthContext,
    @Param('username') username: string,
    @Paging() page: PageQuery,
    @Query('fingerprint') fingerprint?: unknown,
  ): Promise<PagedList<PublicKeyWire>> {
    const found = await this.keys.listOfUser(caller, username, page, queryString(fingerprint) || undefined);
    return pagedList(found, page, (item) => toPublicKeyWire(item, caller, this.siteUrls));
  }
}
