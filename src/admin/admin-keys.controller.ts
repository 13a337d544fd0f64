import { Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, SiteAdmin } from '../auth/route-auth';
import { Body } from '../http/body-guard';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { parseKeyId } from '../keys/key-owners';
import { CreateKeyOption } from '../keys/ssh/create-key.option';
import { PublicKeyWire, toPublicKeyWire } from '../keys/ssh/public-key.wire';
import { PublicKeysService } from '../keys/ssh/public-keys.service';
import { UsersService } from '../users/users.service';
import { SiteUrls } from '../common/site-urls';

@ApiTags('admin')
@Controller()
export class AdminKeysController {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly keys: PublicKeysService,
    private readonly users: UsersService,
  ) {}

  @Post('admin/users/:username/keys')
  @SiteAdmin()
  @ApiOperation({ summary: 'Add a public key on behalf of a user' })
  @ApiCreatedResponse({ type: PublicKeyWire })
  @ApiErrors(404, 422)
  async create(@Caller() caller: AuthContext, @Param('username') username: string, @Body() option: CreateKeyOption): Promise<PublicKeyWire> {
    const owner = await this.users.individualByName(username);
    return toPublicKeyWire(await this.keys.create(owner, option.title, option.key), caller, this.siteUrls);
  }

  @Delete('admin/users/:username/keys/:id')
  @SiteAdmin()
  @HttpCode(204)
  @ApiOperation({ summary: "Delete a user's public key" })
  @ApiEmpty()
  @ApiErrors(404)
  async delete(@Param('username') username: string, @Param('id') id: string): Promise<void> {
    await this.keys.deleteOfUser(await this.users.individualByName(username), parseKeyId(id));
  }
}
