import { DynamicModule, MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { LoggerModule } from 'nestjs-pino';
import { AdminModule } from './admin/admin.module';
import { AuthModule } from './auth/auth.module';
import { AuthenticationMiddleware } from './auth/authentication.middleware';
import { ApiRequestTimeout } from './common/api-request-timeout';
import { BodyInterceptor, BodyPipe } from './common/body';
import { CommonModule } from './common/common.module';
import { ContentModule } from './content/content.module';
import { HttpErrorFilter } from './common/http-error.filter';
import { requestLogOptions } from './common/request-log';
import { ResponseInterceptor } from './common/response.interceptor';
import { SecurityHeadersMiddleware } from './common/security-headers.middleware';
import type { AppConfig } from './config/config';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { GitHttpModule } from './git-http/git-http.module';
import { KeysModule } from './keys/keys.module';
import { MarkdownModule } from './markdown/markdown.module';
import { PagesModule } from './pages/pages.module';
import { MirrorsModule } from './mirrors/mirrors.module';
import { QuotaRoutesModule } from './quota/quota.module';
import { PackagesModule } from './packages/packages.module';
import { ReleasesModule } from './releases/releases.module';
import { ReposModule } from './repos/repos.module';
import { ServerModule } from './server/server.module';
import { SshModule } from './ssh/ssh.module';
import { UsersModule } from './users/users.module';

/** Imports the modules; nothing else. */
@Module({})
export class AppModule implements NestModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot(requestLogOptions(config)),
        DatabaseModule.forRoot(config),
        CommonModule,
        AuthModule,
        UsersModule,
        KeysModule,
        ReposModule,
        ReleasesModule,
        PackagesModule,
        MirrorsModule,
        GitHttpModule,
        SshModule,
        // Quota routes exist only while quota is enabled; the engine itself always answers [D22].
        ...(config.quota.enabled ? [QuotaRoutesModule] : []),
        AdminModule,
        MarkdownModule,
        ServerModule,
        ContentModule,
        PagesModule,
      ],
      providers: [
        { provide: APP_FILTER, useClass: HttpErrorFilter },
        // Outermost: the API request timeout counts from the guard's pass, body reading included.
        { provide: APP_INTERCEPTOR, useClass: ApiRequestTimeout },
        { provide: APP_INTERCEPTOR, useClass: BodyInterceptor },
        { provide: APP_INTERCEPTOR, useClass: ResponseInterceptor },
        { provide: APP_PIPE, useClass: BodyPipe },
        SecurityHeadersMiddleware,
      ],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(SecurityHeadersMiddleware, AuthenticationMiddleware).forRoutes('{*path}');
  }
}
