import { Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { Body } from '../http/body-guard';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { UserDirectoryService } from '../users/user-directory.service';
import type { AuthContext } from '../auth/auth-context';
import { Caller, SiteAdmin } from '../auth/route-auth';
import { InvalidInputError } from '../common/errors';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { toUserWire } from '../users/user.mapper';
import { UserWire } from '../users/user.wire';
import { UsersService } from '../users/users.service';
import { CreateUserOption } from './create-user.option';
import { EditUserOption } from './edit-user.option';
import { SiteUrls } from '../common/site-urls';

@ApiTags('admin')
@Controller()
export class AdminUsersController {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly users: UsersService,
    private readonly directory: UserDirectoryService,
  ) {}

  @Get('admin/users')
  @SiteAdmin()
  @ApiOperation({ summary: 'Search users according filter conditions' })
  @ApiQuery({ name: 'q', required: false, description: 'substring of the login, full name or e-mail' })
  @ApiQuery({ name: 'login_name', required: false, description: "user's login name to search for" })
  @ApiQuery({ name: 'source_id', required: false, type: Number, description: 'ignored: Anvil has no external sign-in sources' })
  @ApiQuery({
    name: 'sort',
    required: false,
    enum: ['oldest', 'newest', 'alphabetically', 'reversealphabetically', 'recentupdate', 'leastupdate'],
    description: 'alphabetically by default',
  })
  @ApiPaging()
  @ApiOkResponse({ type: [UserWire], description: 'UserList' })
  async search(@Caller() caller: AuthContext, @Query() query: Record<string, unknown>, @Paging() page: PageQuery): Promise<PagedList<UserWire>> {
    const found = await this.directory.adminSearch(caller, query, page);
    return pagedList(found, page, (user) => toUserWire(user, caller, this.siteUrls));
  }

  @Post('admin/users')
  @SiteAdmin()
  @ApiCreatedResponse({ type: UserWire })
  @ApiErrors(400, 422)
  async create(@Caller() caller: AuthContext, @Body() option: CreateUserOption): Promise<UserWire> {
    const user = await this.users.create({
      username: option.username,
      email: option.email,
      password: option.password ?? '',
      fullName: option.full_name,
      mustChangePassword: option.must_change_password,
      restricted: option.restricted,
      visibility: option.visibility,
      createdUnix: option.created_at === undefined ? undefined : parseCreatedAt(option.created_at),
    });
    return toUserWire(user, caller, this.siteUrls);
  }

  @Patch('admin/users/:username')
  @SiteAdmin()
  @ApiOkResponse({ type: UserWire })
  @ApiErrors(400, 404, 422)
  async edit(@Caller() caller: AuthContext, @Param('username') username: string, @Body() option: EditUserOption): Promise<UserWire> {
    const user = await this.users.edit(username, {
      email: option.email,
      fullName: option.full_name,
      password: option.password,
      website: option.website,
      location: option.location,
      description: option.description,
      visibility: option.visibility,
      mustChangePassword: option.must_change_password,
      active: option.active,
      admin: option.admin,
      prohibitLogin: option.prohibit_login,
      restricted: option.restricted,
      allowCreateOrganization: option.allow_create_organization,
      hideEmail: option.hide_email,
    });
    return toUserWire(user, caller, this.siteUrls);
  }

  @Delete('admin/users/:username')
  @SiteAdmin()
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(400, 404, 422)
  async delete(@Caller() caller: AuthContext, @Param('username') username: string): Promise<void> {
    await this.users.delete(caller, username);
  }
}

function parseCreatedAt(value: string): number {
  const millis = Date.parse(value);
  if (Number.isNaN(millis)) throw new InvalidInputError('[CreatedAt]: must be an RFC 3339 time');
  return Math.floor(millis / 1000);
}
