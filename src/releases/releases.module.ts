import { Module, OnModuleInit } from '@nestjs/common';
import { BlobsModule } from '../blobs/blobs.module';
import { GitModule } from '../git/git.module';
import { ReposModule } from '../repos/repos.module';
import { RepositoriesService } from '../repos/repositories.service';
import { UsersModule } from '../users/users.module';
import { ReleaseAttachmentsService } from './release-attachments.service';
import { ReleaseDownloadsController } from './release-downloads.controller';
import { ReleasePagesController } from './release-pages.controller';
import { ReleaseStore } from './release.store';
import { ReleasesController } from './releases.controller';
import { ReleasesService } from './releases.service';

/** Releases and their attachments; files in the shared blob store, sizes reported to quota. */
@Module({
  imports: [UsersModule, ReposModule, GitModule, BlobsModule],
  controllers: [ReleasesController, ReleaseDownloadsController, ReleasePagesController],
  providers: [ReleaseStore, ReleasesService, ReleaseAttachmentsService],
})
export class ReleasesModule implements OnModuleInit {
  constructor(
    private readonly repositories: RepositoriesService,
    private readonly store: ReleaseStore,
    private readonly releases: ReleasesService,
  ) {}

  onModuleInit(): void {
    // A deleted repository takes its releases, attachment rows and, after the commit, their files.
    this.repositories.onRepositoryDeleted(async (tx, repo) => {
      const uuids = await this.store.deleteAllOfRepository(tx, repo.id);
      return uuids.length > 0 ? () => this.releases.removeFiles(uuids) : undefined;
    });
  }
}
