import { ClaimsModule } from '../claims/claims.module';
import { Module, OnModuleInit } from '@nestjs/common';
import { Clock } from '../common/time';
import { StorageConfig } from '../config/slices';
import { GitModule } from '../git/git.module';
import { LfsModule } from '../lfs/lfs.module';
import { RepositoriesService } from '../repos/repositories.service';
import { ReposModule } from '../repos/repos.module';
import { UsersModule } from '../users/users.module';
import { HOST_RESOLVER, HostPolicy, systemResolver } from '../outbound/host-policy';
import { MigrationsController } from './migrations.controller';
import { MigrationsService } from './migrations.service';
import { LfsFetch } from './lfs-fetch';
import { MirrorCredentials } from './mirror-credentials';
import { parseMirrorInterval } from './mirror-interval';
import { MirrorRunner } from './mirror-runner';
import { MirrorScheduler } from './mirror-scheduler';
import { MirrorSyncProcedure } from './mirror-sync.procedure';
import { MirrorSyncService } from './mirror-sync.service';
import { MirrorStore } from './mirror.store';
import { loadSecretKey, SecretBox } from '../secrets/secret-box';
import { RepositorySettings } from '../repos/repository-settings.service';

/** Migrations and pull mirrors: POST /repos/migrate, mirror-sync, the sync procedure and the scheduler. */
@Module({
  imports: [UsersModule, ReposModule, GitModule, ClaimsModule, LfsModule],
  controllers: [MigrationsController],
  providers: [
    { provide: HOST_RESOLVER, useValue: systemResolver },
    HostPolicy,
    SecretBox,
    MirrorCredentials,
    MirrorStore,
    MigrationsService,
    LfsFetch,
    MirrorSyncProcedure,
    MirrorRunner,
    MirrorSyncService,
    MirrorScheduler,
  ],
  exports: [MirrorScheduler, MirrorRunner],
})
export class MirrorsModule implements OnModuleInit {
  constructor(
    private readonly storageConfig: StorageConfig,
    private readonly repositories: RepositoriesService,
    private readonly settings: RepositorySettings,
    private readonly mirrors: MirrorStore,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    // SECRET_KEY is generated into DATA_DIR on first start, not at the first migration.
    loadSecretKey(this.storageConfig);
    this.settings.useMirrorIntervalEditor({
      prepare: (repo, value) => {
        const interval = parseMirrorInterval(value === '' ? '8h' : value);
        return {
          display: interval.display,
          // Forgejo's ScheduleNextUpdate: due after the new interval from now, never when 0.
          apply: (tx) => this.mirrors.setInterval(tx, repo.id, interval.seconds, interval.seconds > 0 ? this.clock.nowUnix() + interval.seconds : 0),
        };
      },
    });
    this.repositories.onRepositoryDeleted((tx, repo) => this.mirrors.deleteOfRepository(tx, repo.id));
  }
}
