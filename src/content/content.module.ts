import { Module } from '@nestjs/common';
import { GitModule } from '../git/git.module';
import { LfsModule } from '../lfs/lfs.module';
import { ReposModule } from '../repos/repos.module';
import { UsersModule } from '../users/users.module';
import { BranchesController } from './branches.controller';
import { BranchesService } from './branches.service';
import { CommitsController } from './commits.controller';
import { CommitsService } from './commits.service';
import { ContentRefs } from './content-refs';
import { ContentRepositories } from './content-repository';
import { ContentsController } from './contents.controller';
import { ContentsService } from './contents.service';
import { DownloadsController } from './downloads.controller';
import { DownloadsService } from './downloads.service';
import { FileWritesService } from './file-writes.service';
import { TagsController } from './tags.controller';
import { GitDataController } from './git-data.controller';
import { GitDataService } from './git-data.service';
import { TagsService } from './tags.service';

/** What is inside a repository, over the API: branches, tags, commits, files, raw downloads and archives. */
@Module({
  imports: [GitModule, ReposModule, UsersModule, LfsModule],
  controllers: [BranchesController, TagsController, CommitsController, ContentsController, DownloadsController, GitDataController],
  providers: [
    ContentRepositories,
    ContentRefs,
    BranchesService,
    TagsService,
    CommitsService,
    ContentsService,
    FileWritesService,
    DownloadsService,
    GitDataService,
  ],
  exports: [ContentRepositories, ContentRefs],
})
export class ContentModule {}
