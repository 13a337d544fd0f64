import { Module, OnModuleInit } from '@nestjs/common';
import { ContentModule } from '../content/content.module';
import { GitModule } from '../git/git.module';
import { ReposModule } from '../repos/repos.module';
import { RepositoriesService } from '../repos/repositories.service';
import { LanguageStatStore } from './language-stat.store';
import { LanguagesController } from './languages.controller';
import { LanguagesService } from './languages.service';

/** Language statistics of repositories, measured once per head of the default branch. */
@Module({
  imports: [ContentModule, GitModule, ReposModule],
  controllers: [LanguagesController],
  providers: [LanguageStatStore, LanguagesService],
})
export class LanguagesModule implements OnModuleInit {
  constructor(
    private readonly repositories: RepositoriesService,
    private readonly stats: LanguageStatStore,
  ) {}

  onModuleInit(): void {
    this.repositories.onRepositoryDeleted((tx, repo) => this.stats.deleteAllOfRepository(tx, repo.id));
  }
}
