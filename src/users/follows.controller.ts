import { Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, requireSignedIn, SignedIn } from '../auth/route-auth';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { FollowsService } from './follows.service';
import { UserEntity } from './user.entity';
import { toUserWire } from './user.mapper';
import { UserWire } from './user.wire';
import { SiteUrls } from '../common/site-urls';

/** Followers and following: the caller's and another user's. */
@ApiTags('user')
@Controller()
export class FollowsController {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly follows: FollowsService,
  ) {}

  @Get('user/followers')
  @SignedIn('user')
  @ApiPaging()
  @ApiOkResponse({ type: [UserWire], description: 'UserList' })
  @ApiErrors(500)
  async myFollowers(@Caller() caller: AuthContext, @Paging() page: PageQuery): Promise<PagedList<UserWire>> {
    requireSignedIn(caller);
    return this.list(caller, page, await this.follows.myFollowers(caller, page));
  }

  @Get('user/following')
  @SignedIn('user')
  @ApiPaging()
  @ApiOkResponse({ type: [UserWire], description: 'UserList' })
  @ApiErrors(500)
  async myFollowing(@Caller() caller: AuthContext, @Paging() page: PageQuery): Promise<PagedList<UserWire>> {
    requireSignedIn(caller);
    return this.list(caller, page, await this.follows.myFollowing(caller, page));
  }

  @Get('user/following/:username')
  @SignedIn('user')
  @HttpCode(204)
  @ApiEmpty(204, 'the caller follows the user')
  @ApiErrors(404)
  async checkMyFollowing(@Caller() caller: AuthContext, @Param('username') username: string): Promise<void> {
    requireSignedIn(caller);
    await this.follows.assertIFollow(caller, username);
  }

  @Put('user/following/:username')
  @SignedIn('user')
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(404, 500)
  async follow(@Caller() caller: AuthContext, @Param('username') username: string): Promise<void> {
    requireSignedIn(caller);
    await this.follows.follow(caller, username);
  }

  @Delete('user/following/:username')
  @SignedIn('user')
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(404, 500)
  async unfollow(@Caller() caller: AuthContext, @Param('username') username: string): Promise<void> {
    requireSignedIn(caller);
    await this.follows.unfollow(caller, username);
  }

  @Get('users/:username/followers')
  @SignedIn('user')
  @ApiPaging()
  @ApiOkResponse({ type: [UserWire], description: 'UserList' })
  @ApiErrors(404, 500)
  async followersOf(@Caller() caller: AuthContext, @Param('username') username: string, @Paging() page: PageQuery): Promise<PagedList<UserWire>> {
    return this.list(caller, page, await this.follows.followersOf(caller, username, page));
  }

  @Get('users/:username/following')
  @SignedIn('user')
  @ApiPaging()
  @ApiOkResponse({ type: [UserWire], description: 'UserList' })
  @ApiErrors(404, 500)
  async followingOf(@Caller() caller: AuthContext, @Param('username') username: string, @Paging() page: PageQuery): Promise<PagedList<UserWire>> {
    return this.list(caller, page, await this.follows.followingOf(caller, username, page));
  }

  @Get('users/:username/following/:target')
  @SignedIn('user')
  @HttpCode(204)
  @ApiEmpty(204, 'the user follows the target')
  @ApiErrors(404)
  async checkFollowing(@Caller() caller: AuthContext, @Param('username') username: string, @Param('target') target: string): Promise<void> {
    await this.follows.assertFollows(caller, username, target);
  }

  private list(caller: AuthContext, query: PageQuery, page: { items: UserEntity[]; total: number }): PagedList<UserWire> {
    return pagedList(page, query, (user) => toUserWire(user, caller, this.siteUrls));
  }
}
