import { Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from './repository-assignment';
import type { AuthContext } from '../auth/auth-context';
import { Caller, SignedIn } from '../auth/route-auth';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { RepositoryWire } from './repository.wire';
import { StarsService } from './stars.service';

@ApiTags('user')
@Controller()
export class StarsController {
  constructor(private readonly stars: StarsService) {}

  @Get('user/starred')
  @SignedIn('user', 'repository')
  @ApiOperation({ summary: 'The repos that the authenticated user has starred' })
  @ApiPaging()
  @ApiOkResponse({ type: [RepositoryWire], description: 'RepositoryList' })
  @ApiErrors(500)
  async listMine(@Caller() caller: AuthContext, @Paging() page: PageQuery): Promise<PagedList<RepositoryWire>> {
    return pagedList(await this.stars.listMine(caller, page), page, (repo) => repo);
  }

  @Get('user/starred/:owner/:repo')
  @SignedIn('user', 'repository')
  @RepositoryRoute()
  @HttpCode(204)
  @ApiOperation({ summary: 'Whether the authenticated user is starring the repo' })
  @ApiEmpty(204, 'starred')
  @ApiErrors(404)
  async isStarred(@TargetRepository() target: RepositoryTarget): Promise<void> {
    await this.stars.assertStarred(target);
  }

  @Put('user/starred/:owner/:repo')
  @SignedIn('user', 'repository')
  @RepositoryRoute()
  @HttpCode(204)
  @ApiOperation({ summary: 'Star the given repo' })
  @ApiEmpty()
  @ApiErrors(403, 404, 500)
  async star(@TargetRepository() target: RepositoryTarget): Promise<void> {
    await this.stars.star(target);
  }

  @Delete('user/starred/:owner/:repo')
  @SignedIn('user', 'repository')
  @RepositoryRoute()
  @HttpCode(204)
  @ApiOperation({ summary: 'Unstar the given repo' })
  @ApiEmpty()
  @ApiErrors(403, 404, 500)
  async unstar(@TargetRepository() target: RepositoryTarget): Promise<void> {
    await this.stars.unstar(target);
  }

  @Get('users/:username/starred')
  @SignedIn('user')
  @ApiOperation({ summary: 'The repos that the given user has starred' })
  @ApiPaging()
  @ApiOkResponse({ type: [RepositoryWire], description: 'RepositoryList' })
  @ApiErrors(404, 500)
  async listOf(@Caller() caller: AuthContext, @Param('username') username: string, @Paging() page: PageQuery): Promise<PagedList<RepositoryWire>> {
    return pagedList(await this.stars.listOf(caller, username, page), page, (repo) => repo);
  }
}
