import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, SignedIn } from '../auth/route-auth';
import { toUserWire } from './user.mapper';
import { UserWire } from './user.wire';
import { SiteUrls } from '../common/site-urls';

@ApiTags('user')
@Controller()
export class CurrentUserController {
  constructor(private readonly siteUrls: SiteUrls) {}

  @Get('user')
  @SignedIn('user')
  @ApiOkResponse({ type: UserWire })
  getCurrentUser(@Caller() caller: AuthContext): UserWire {
    return toUserWire(caller.user!, caller, this.siteUrls);
  }
}
