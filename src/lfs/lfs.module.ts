import { Module, OnModuleInit } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { BlobsModule } from '../blobs/blobs.module';
import { ForksService } from '../repos/forks.service';
import { ReposModule } from '../repos/repos.module';
import { UsersModule } from '../users/users.module';
import { LfsContent } from './lfs-content';
import { LfsHttpHandler } from './lfs-http.handler';
import { LfsLockStore } from './lfs-lock.store';
import { LfsObjectStore } from './lfs-object.store';
import { LfsLifecycle } from './lfs-lifecycle';
import { LfsService } from './lfs.service';
import { LfsSshAuthentication } from './lfs-ssh-authentication';
import { LfsTokens } from './lfs-tokens';
import { LfsLocksService } from './lfs-locks.service';
import { LfsMedia } from './lfs-media';
import { LfsIntake } from './lfs-intake';

/** Git LFS over HTTP, and its tokens over SSH; bootstrap.ts mounts LfsHttpHandler ahead of the API's middleware. */
@Module({
  imports: [AuthModule, BlobsModule, ReposModule, UsersModule],
  providers: [
    LfsObjectStore,
    LfsLockStore,
    LfsContent,
    LfsService,
    LfsHttpHandler,
    LfsTokens,
    LfsSshAuthentication,
    LfsLocksService,
    LfsMedia,
    LfsIntake,
    LfsLifecycle,
  ],
  exports: [LfsHttpHandler, LfsSshAuthentication, LfsMedia, LfsIntake],
})
export class LfsModule implements OnModuleInit {
  constructor(
    private readonly forks: ForksService,
    private readonly lfs: LfsService,
  ) {}

  onModuleInit(): void {
    // A fork holds its source's objects from the start (their rows, the files shared).
    this.forks.onFork({ check: (forker, source) => this.lfs.checkFork(forker, source), link: (tx, source, fork) => this.lfs.linkFork(tx, source, fork) });
  }
}
