import { Controller, HttpCode, Post } from '@nestjs/common';
import { Body } from '../http/body-guard';
import { ApiCreatedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import type { AuthContext } from '../auth/auth-context';
import { AuthenticatedLater, Caller, SignedIn } from '../auth/route-auth';
import { NoRequestTimeout } from '../http/request-timeout';
import { ClientGone } from '../http/client-gone';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { RepositoryWire } from '../repos/repository.wire';
import { MigrateRepositoryOption } from './migrate-repository.option';
import { MigrationsService } from './migrations.service';
import { MIRROR_SYNC_REFUSED, MirrorSyncService } from './mirror-sync.service';

@ApiTags('repository')
@Controller()
export class MigrationsController {
  constructor(
    private readonly migrations: MigrationsService,
    private readonly mirrorSyncs: MirrorSyncService,
  ) {}

  @Post('repos/migrate')
  @SignedIn('repository')
  // The clone has its own, longer limit (600 s): API_REQUEST_TIMEOUT would answer 503 while it
  // goes on and then creates the repository.
  @NoRequestTimeout()
  @ApiOperation({ operationId: 'repoMigrate', summary: 'Migrate a remote git repository' })
  @ApiCreatedResponse({ type: RepositoryWire })
  @ApiErrors(403, 409, 413, 422, 500, 503)
  migrate(@Caller() caller: AuthContext, @Body() option: MigrateRepositoryOption, @ClientGone() clientGone: AbortSignal): Promise<RepositoryWire> {
    return this.migrations.migrate(caller, option, clientGone);
  }

  @Post('repos/:owner/:repo/mirror-sync')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'write', writes: 'repo.code', message: MIRROR_SYNC_REFUSED })
  @HttpCode(200)
  @ApiOperation({ operationId: 'repoMirrorSync', summary: "Sync a mirrored repository's remote" })
  @ApiEmpty(200, 'APIEmpty is an empty response')
  @ApiErrors(400, 403, 404, 413)
  async mirrorSync(@TargetRepository() target: RepositoryTarget): Promise<void> {
    await this.mirrorSyncs.requestSync(target);
  }
}
