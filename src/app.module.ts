import { LanguagesModule } from './languages/languages.module';
import { SettingsModule } from './settings/settings.module';
import { LabelsModule } from './labels/labels.module';
import { IssuesModule } from './issues/issues.module';
import { PullsModule } from './pulls/pulls.module';
import { ReviewsModule } from './reviews/reviews.module';
import { MilestonesModule } from './milestones/milestones.module';
import { DynamicModule, Module } from '@nestjs/common';
import { foundationModules } from './app-foundation';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AdminModule } from './admin/admin.module';
import { AuthModule } from './auth/auth.module';
import { ApiRequestTimeout } from './http/request-timeout';
import { BodyPipe } from './http/body-binding';
import { CollaboratorsModule } from './collaborators/collaborators.module';
import { DeployKeysModule } from './deploy-keys/deploy-keys.module';
import { BranchProtectionsModule } from './branch-protections/branch-protections.module';
import { TeamsModule } from './teams/teams.module';
import { ContentModule } from './content/content.module';
import { HttpErrorFilter } from './http/http-error.filter';
import type { AppConfig } from './config/config';
import { GitHttpModule } from './git-http/git-http.module';
import { LfsModule } from './lfs/lfs.module';
import { IntegrityModule } from './integrity/integrity.module';
import { KeysModule } from './keys/keys.module';
import { MarkdownModule } from './markdown/markdown.module';
import { PagesModule } from './pages/pages.module';
import { OAuth2Module } from './oauth2/oauth2.module';
import { MirrorsModule } from './mirrors/mirrors.module';
import { QuotaRoutesModule } from './quota/quota.module';
import { PackagesModule } from './packages/packages.module';
import { ReleasesModule } from './releases/releases.module';
import { ReposModule } from './repos/repos.module';
import { ServerModule } from './server/server.module';
import { SshModule } from './ssh/ssh.module';
import { StatusesModule } from './statuses/statuses.module';
import { UsersModule } from './users/users.module';
import { WebhooksModule } from './webhooks/webhooks.module';

/** Imports the modules; nothing else. The global request pipeline is assembled once, in bootstrap.ts. */
@Module({})
export class AppModule {
  // The whole AppConfig: ConfigModule cuts it into the slices services inject.
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ...foundationModules(config),
        AuthModule,
        UsersModule,
        KeysModule,
        // Before ReposModule: GET /repos/issues/search must be tried before GET /repos/{owner}/{repo}.
        IssuesModule,
        ReposModule,
        ReleasesModule,
        CollaboratorsModule,
        DeployKeysModule,
        BranchProtectionsModule,
        TeamsModule,
        LabelsModule,
        MilestonesModule,
        SettingsModule,
        LanguagesModule,
        PackagesModule,
        MirrorsModule,
        GitHttpModule,
        LfsModule,
        SshModule,
        // Quota routes exist only while quota is enabled; the engine itself always answers.
        ...(config.quota.enabled ? [QuotaRoutesModule] : []),
        AdminModule,
        MarkdownModule,
        ServerModule,
        ContentModule,
        StatusesModule,
        WebhooksModule,
        PagesModule,
        OAuth2Module,
        IntegrityModule,
        // Before PullsModule: …/pulls/{index}/reviews must be tried before …/pulls/{base}/{head}.
        ReviewsModule,
        PullsModule,
      ],
      providers: [
        { provide: APP_FILTER, useClass: HttpErrorFilter },
        // API_REQUEST_TIMEOUT: one timer per routed API request, cleared when the answer ends.
        { provide: APP_GUARD, useClass: ApiRequestTimeout },
        { provide: APP_PIPE, useClass: BodyPipe },
      ],
    };
  }
}
