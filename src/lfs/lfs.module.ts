import { Module, OnModuleInit } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { BlobsModule } from '../blobs/blobs.module';
import { ForksService } from '../repos/forks.service';
import { RepositoriesService } from '../repos/repositories.service';
import { ReposModule } from '../repos/repos.module';
import { UsersModule } from '../users/users.module';
import { LfsContent } from './lfs-content';
import { LfsHttpHandler } from './lfs-http.handler';
import { LfsLockStore } from './lfs-lock.store';
import { LfsObjectStore } from './lfs-object.store';
import { LfsService } from './lfs.service';
import { LfsSshAuthentication } from './lfs-ssh-authentication';
import { LfsTokens } from './lfs-tokens';
import { LfsLocksService } from './lfs-locks.service';
import { LfsMedia } from './lfs-media';
import { LfsIntake } from './lfs-intake';
import { UsersService } from '../users/users.service';

/** Git LFS over HTTP, and its tokens over SSH; bootstrap.ts mounts LfsHttpHandler ahead of the API's middleware. */
@Module({
  imports: [AuthModule, BlobsModule, ReposModule, UsersModule],
  providers: [LfsObjectStore, LfsLockStore, LfsContent, LfsService, LfsHttpHandler, LfsTokens, LfsSshAuthentication, LfsLocksService, LfsMedia, LfsIntake],
  exports: [LfsHttpHandler, LfsSshAuthentication, LfsMedia, LfsIntake],
})
export class LfsModule implements OnModuleInit {
  constructor(
    private readonly repositories: RepositoriesService,
    private readonly forks: ForksService,
    private readonly objects: LfsObjectStore,
    private readonly locks: LfsLockStore,
    private readonly lfs: LfsService,
    private readonly users: UsersService,
  ) {}

  onModuleInit(): void {
    // A fork holds its source's objects from the start (their rows, the files shared).
    this.forks.onFork({ check: (forker, source) => this.lfs.checkFork(forker, source), link: (tx, source, fork) => this.lfs.linkFork(tx, source, fork) });
    // A deleted repository's objects and locks go in the deleting transaction; after its commit, the files
    // that no other repository holds.
    this.repositories.onRepositoryDeleted(async (tx, repo) => {
      await this.locks.deleteOfRepository(tx, repo.id);
      const oids = await this.objects.deleteOfRepository(tx, repo.id);
      return oids.length === 0 ? undefined : () => this.lfs.removeUnreferenced(oids);
    });
    this.users.onUserDeleted((tx, user) => this.locks.deleteOfOwner(tx, user.id));
  }
}
