import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RepositoryTarget } from '../access/repository-policy';
import { AuthenticatedLater, Public } from '../auth/route-auth';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { Body } from '../http/body-guard';
import { CreateForkOption } from './create-fork.option';
import { ForksService } from './forks.service';
import { RepositoryRoute, TargetRepository } from './repository-assignment';
import { RepositoryWire, SyncForkInfoWire } from './repository.wire';

@ApiTags('repository')
@Controller()
export class ForksController {
  constructor(private readonly forks: ForksService) {}

  @Get('repos/:owner/:repo/forks')
  @Public('repository')
  @RepositoryRoute()
  @ApiOperation({ summary: "List a repository's forks" })
  @ApiPaging()
  @ApiOkResponse({ type: [RepositoryWire], description: 'RepositoryList' })
  @ApiErrors(404)
  async list(@TargetRepository() target: RepositoryTarget, @Paging() page: PageQuery): Promise<PagedList<RepositoryWire>> {
    return pagedList(await this.forks.list(target, page), page, (repo) => repo);
  }

  @Post('repos/:owner/:repo/forks')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.code', mode: 'signed-in' })
  @HttpCode(202)
  @ApiOperation({ summary: 'Fork a repository' })
  @ApiAcceptedResponse({ type: RepositoryWire })
  @ApiErrors(401, 403, 404, 409, 413, 422)
  fork(@TargetRepository() target: RepositoryTarget, @Body() option: CreateForkOption): Promise<RepositoryWire> {
    return this.forks.fork(target, option);
  }

  @Get('repos/:owner/:repo/sync_fork')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ summary: "Get information about syncing the fork's default branch with the base branch" })
  @ApiOkResponse({ type: SyncForkInfoWire })
  @ApiErrors(404)
  syncDefaultInfo(@TargetRepository() target: RepositoryTarget): Promise<SyncForkInfoWire> {
    return this.forks.syncInfo(target);
  }

  @Post('repos/:owner/:repo/sync_fork')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.code', mode: 'write' })
  @HttpCode(204)
  @ApiOperation({ summary: "Sync the fork's default branch with the base branch (fast-forward only)" })
  @ApiEmpty()
  @ApiErrors(400, 401, 403, 404, 409, 413, 423)
  async syncDefault(@TargetRepository() target: RepositoryTarget): Promise<void> {
    await this.forks.sync(target);
  }

  @Get('repos/:owner/:repo/sync_fork/:branch')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ summary: 'Get information about syncing a fork branch with the base branch' })
  @ApiOkResponse({ type: SyncForkInfoWire })
  @ApiErrors(404)
  syncBranchInfo(@TargetRepository() target: RepositoryTarget, @Param('branch') branch: string): Promise<SyncForkInfoWire> {
    return this.forks.syncInfo(target, branch);
  }

  @Post('repos/:owner/:repo/sync_fork/:branch')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.code', mode: 'write' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Sync a fork branch with the base branch (fast-forward only)' })
  @ApiEmpty()
  @ApiErrors(400, 401, 403, 404, 409, 413, 423)
  async syncBranch(@TargetRepository() target: RepositoryTarget, @Param('branch') branch: string): Promise<void> {
    await this.forks.sync(target, branch);
  }
}
