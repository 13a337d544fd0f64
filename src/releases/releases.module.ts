import { Module } from '@nestjs/common';
import { BlobsModule } from '../blobs/blobs.module';
import { GitModule } from '../git/git.module';
import { ReposModule } from '../repos/repos.module';
import { UsersModule } from '../users/users.module';
import { ReleaseAttachmentsService } from './release-attachments.service';
import { ReleaseDownloadsController } from './release-downloads.controller';
import { ReleasePagesController } from './release-pages.controller';
import { ReleaseStore } from './release.store';
import { ReleasesController } from './releases.controller';
import { ReleasesService } from './releases.service';
import { ReleasesLifecycle } from './releases-lifecycle';

/** Releases and their attachments; files in the shared blob store, sizes reported to quota. */
@Module({
  imports: [UsersModule, ReposModule, GitModule, BlobsModule],
  controllers: [ReleasesController, ReleaseDownloadsController, ReleasePagesController],
  providers: [ReleaseStore, ReleasesService, ReleaseAttachmentsService, ReleasesLifecycle],
})
export class ReleasesModule {}
