import { ClaimsModule } from '../claims/claims.module';
import { Module, OnModuleInit } from '@nestjs/common';
import { StorageConfig } from '../config/slices';
import { GitModule } from '../git/git.module';
import { LfsModule } from '../lfs/lfs.module';
import { ReposModule } from '../repos/repos.module';
import { UsersModule } from '../users/users.module';
import { HOST_RESOLVER, HostPolicy, systemResolver } from '../outbound/host-policy';
import { MigrationsController } from './migrations.controller';
import { MigrationsService } from './migrations.service';
import { LfsFetch } from './lfs-fetch';
import { MirrorCredentials } from './mirror-credentials';
import { MirrorRunner } from './mirror-runner';
import { MirrorScheduler } from './mirror-scheduler';
import { MirrorSyncProcedure } from './mirror-sync.procedure';
import { MirrorSyncService } from './mirror-sync.service';
import { MirrorStore } from './mirror.store';
import { MirrorsLifecycle } from './mirrors-lifecycle';
import { loadSecretKey, SecretBox } from '../secrets/secret-box';

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
    MirrorsLifecycle,
  ],
  exports: [MirrorScheduler, MirrorRunner],
})
export class MirrorsModule implements OnModuleInit {
  constructor(private readonly storageConfig: StorageConfig) {}

  onModuleInit(): void {
    // SECRET_KEY is generated into DATA_DIR on first start, not at the first migration.
    loadSecretKey(this.storageConfig);
  }
}
