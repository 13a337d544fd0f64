import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, Public } from '../auth/route-auth';
import { ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { toUserWire } from './user.mapper';
import { UserWire } from './user.wire';
import { UserDirectoryService } from './user-directory.service';
import { SiteUrls } from '../common/site-urls';

/** Users group A (docs/check-order.md): the search and the profile of a user or organisation. */
@ApiTags('user')
@Controller()
export class UsersController {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly directory: UserDirectoryService,
  ) {}

  // Declared before users/:username, which would otherwise take "search" as a user name.
  @Get('users/search')
  @Public('user')
  @ApiQuery({ name: 'q', required: false, description: 'substring of the login, full name or (where visible) e-mail' })
  @ApiQuery({ name: 'uid', required: false, type: Number, description: 'only this user id (-1 Ghost, -2 forgejo-actions)' })
  @ApiQuery({
    name: 'sort',
    required: false,
    enum: ['oldest', 'newest', 'alphabetically', 'reversealphabetically', 'recentupdate', 'leastupdate'],
    description: 'alphabetically by default; an unknown value also sorts alphabetically',
  })
  @ApiPaging()
  @ApiOkResponse({ type: [UserWire], description: 'UserList' })
  @ApiErrors(500)
  async search(@Caller() caller: AuthContext, @Query() query: Record<string, unknown>, @Paging() page: PageQuery): Promise<PagedList<UserWire>> {
    const found = await this.directory.search(caller, query, page);
    return pagedList(found, page, (user) => toUserWire(user, caller, this.siteUrls));
  }

  @Get('users/:username')
  @Public('user')
  @ApiOkResponse({ type: UserWire })
  @ApiErrors(404, 500)
  async get(@Caller() caller: AuthContext, @Param('username') username: string): Promise<UserWire> {
    return toUserWire(await this.directory.visibleByName(caller, username), caller, this.siteUrls);
  }
}
