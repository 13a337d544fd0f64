import { Module } from '@nestjs/common';
import { ContentModule } from '../content/content.module';
import { GitModule } from '../git/git.module';
import { ReposModule } from '../repos/repos.module';
import { LanguageStatStore } from './language-stat.store';
import { LanguagesController } from './languages.controller';
import { LanguagesService } from './languages.service';
import { LanguagesLifecycle } from './languages-lifecycle';

/** Language statistics of repositories, measured once per head of the default branch. */
@Module({
  imports: [ContentModule, GitModule, ReposModule],
  controllers: [LanguagesController],
  providers: [LanguageStatStore, LanguagesService, LanguagesLifecycle],
})
export class LanguagesModule {}
