import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuthContext } from '../auth/auth-context';
import { Caller, Public } from '../auth/route-auth';
import { GpgKeysService } from './gpg/gpg-keys.service';
import { sendPlainText } from './plain-text';
import { PublicKeysService } from './ssh/public-keys.service';
import { OutsideApi } from '../http/outside-api';

/**
 * The listings git users fetch from `{ROOT_URL}<user>.keys` and `{ROOT_URL}<user>.gpg`, as Forgejo serves
 * them: not part of the API (nor of its OpenAPI document); bootstrap.ts keeps both paths out of the /api/v1
 * prefix. An unknown or invisible user is a 404.
 */
@ApiExcludeController()
@Controller()
export class PlainTextKeysController {
  constructor(
    private readonly sshKeys: PublicKeysService,
    private readonly gpgKeys: GpgKeysService,
  ) {}

  /** authorized_keys lines: `<type> <base64>`, one key per line. */
  @Get(':username.keys')
  @OutsideApi()
  @Public()
  async authorizedKeys(@Caller() caller: AuthContext, @Param('username') username: string, @Res() response: Response): Promise<void> {
    sendPlainText(response, await this.sshKeys.authorizedKeys(caller, username));
  }

  /** The user's GPG keys in one ASCII-armored public-key block. */
  @Get(':username.gpg')
  @OutsideApi()
  @Public()
  async armoredKeys(@Caller() caller: AuthContext, @Param('username') username: string, @Res() response: Response): Promise<void> {
    sendPlainText(response, await this.gpgKeys.armoredKeys(caller, username));
  }
}
