import { Controller, Delete, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuthContext } from '../../auth/auth-context';
import { Caller, SignedIn } from '../../auth/route-auth';
import { Body, ReadsBody } from '../../http/body-guard';
import { ApiEmpty, ApiErrors } from '../../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../../common/paging';
import { parseKeyId } from '../key-owners';
import { sendPlainText } from '../plain-text';
import { CreateGpgKeyOption } from './create-gpg-key.option';
import { GpgKeyWire, toGpgKeyWire } from './gpg-key.wire';
import { GpgKeysService } from './gpg-keys.service';
import { RateLimit } from '../../http/rate-limits';

@ApiTags('user')
@Controller()
export class GpgKeysController {
  constructor(private readonly keys: GpgKeysService) {}

  @Get('user/gpg_keys')
  @SignedIn('user')
  @ApiPaging()
  @ApiOkResponse({ type: [GpgKeyWire], description: 'GPGKeyList' })
  async listMine(@Caller() caller: AuthContext, @Paging() page: PageQuery): Promise<PagedList<GpgKeyWire>> {
    return pagedList(await this.keys.listForCaller(caller.user!, page), page, toGpgKeyWire);
  }

  @Post('user/gpg_keys')
  @SignedIn('user')
  @RateLimit('keyUpload')
  // Room for the 1 MiB armor cap once JSON-escaped; the armor cap itself is the adapter's.
  @ReadsBody({ limit: 2 * 1024 * 1024 })
  @ApiCreatedResponse({ type: GpgKeyWire })
  @ApiErrors(422)
  async create(@Caller() caller: AuthContext, @Body() option: CreateGpgKeyOption): Promise<GpgKeyWire> {
    return toGpgKeyWire(await this.keys.create(caller.user!, option.armored_public_key, option.armored_signature));
  }

  /** text/plain;charset=utf-8 exactly as Forgejo sends it (Express would add a space if given a string). */
  @Get('user/gpg_key_token')
  @SignedIn('user')
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'the verification token (64 lowercase hex digits) to sign', schema: { type: 'string' } })
  token(@Caller() caller: AuthContext, @Res() response: Response): void {
    sendPlainText(response, this.keys.token(caller.user!));
  }

  @Get('user/gpg_keys/:id')
  @SignedIn('user')
  @ApiOkResponse({ type: GpgKeyWire })
  @ApiErrors(404)
  async get(@Caller() caller: AuthContext, @Param('id') id: string): Promise<GpgKeyWire> {
    return toGpgKeyWire(await this.keys.get(caller, parseKeyId(id)));
  }

  @Delete('user/gpg_keys/:id')
  @SignedIn('user')
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(404)
  async delete(@Caller() caller: AuthContext, @Param('id') id: string): Promise<void> {
    await this.keys.delete(caller, parseKeyId(id));
  }

  @Get('users/:username/gpg_keys')
  @SignedIn('user')
  @ApiPaging()
  @ApiOkResponse({ type: [GpgKeyWire], description: 'GPGKeyList' })
  @ApiErrors(404)
  async listOfUser(@Caller() caller: AuthContext, @Param('username') username: string, @Paging() page: PageQuery): Promise<PagedList<GpgKeyWire>> {
    return pagedList(await this.keys.listOfUser(caller, username, page), page, toGpgKeyWire);
  }
}
