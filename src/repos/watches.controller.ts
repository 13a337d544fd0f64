import { Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from './repository-assignment';
import type { AuthContext } from '../auth/auth-context';
import { AuthenticatedLater, Caller, Public, SignedIn } from '../auth/route-auth';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { RepositoryWire, WatchInfoWire } from './repository.wire';
import { WatchesService } from './watches.service';

@ApiTags('repository')
@Controller()
export class WatchesController {
  constructor(private readonly watches: WatchesService) {}

  // As Forgejo: the repository lookup (404) comes before sign-in (401); the repository guard asks for sign-in
  // where the order says (reading whether one watches answers 401 from the service, which needs the caller).
  @Get('repos/:owner/:repo/subscription')
  @Public('repository')
  @RepositoryRoute()
  @ApiOperation({ summary: 'Check if the current user is watching a repo' })
  @ApiOkResponse({ type: WatchInfoWire })
  @ApiErrors(404)
  get(@TargetRepository() target: RepositoryTarget): Promise<WatchInfoWire> {
    return this.watches.get(target);
  }

  @Put('repos/:owner/:repo/subscription')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'signed-in' })
  @ApiOperation({ summary: 'Watch a repo' })
  @ApiOkResponse({ type: WatchInfoWire })
  @ApiErrors(404, 500)
  watch(@TargetRepository() target: RepositoryTarget): Promise<WatchInfoWire> {
    return this.watches.watch(target);
  }

  @Delete('repos/:owner/:repo/subscription')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'signed-in' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Unwatch a repo' })
  @ApiEmpty()
  @ApiErrors(404, 500)
  async unwatch(@TargetRepository() target: RepositoryTarget): Promise<void> {
    await this.watches.unwatch(target);
  }

  @Get('user/subscriptions')
  @SignedIn('user')
  @ApiOperation({ summary: 'List repositories watched by the authenticated user' })
  @ApiPaging()
  @ApiOkResponse({ type: [RepositoryWire], description: 'RepositoryList' })
  @ApiErrors(500)
  async listMine(@Caller() caller: AuthContext, @Paging() page: PageQuery): Promise<PagedList<RepositoryWire>> {
    return pagedList(await this.watches.listMine(caller, page), page, (repo) => repo);
  }

  @Get('users/:username/subscriptions')
  @SignedIn('user')
  @ApiOperation({ summary: 'List the repositories watched by a user' })
  @ApiPaging()
  @ApiOkResponse({ type: [RepositoryWire], description: 'RepositoryList' })
  @ApiErrors(404, 500)
  async listOf(@Caller() caller: AuthContext, @Param('username') username: string, @Paging() page: PageQuery): Promise<PagedList<RepositoryWire>> {
    return pagedList(await this.watches.listOf(caller, username, page), page, (repo) => repo);
  }
}
