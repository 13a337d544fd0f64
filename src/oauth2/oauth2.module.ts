import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import cookieParser from 'cookie-parser';
import { ClaimsModule } from '../claims/claims.module';
import { AuthModule } from '../auth/auth.module';
import { SecretBox } from '../secrets/secret-box';
import { PagesModule } from '../pages/pages.module';
import { UsersModule } from '../users/users.module';
import { INTERACTION_ROUTE, OAuth2InteractionController } from './oauth2-interaction.controller';
import { OAuth2ApplicationsController } from './oauth2-applications.controller';
import { OAuth2ApplicationsService } from './oauth2-applications.service';
import { OAuth2Provider } from './oauth2-provider';
import { OAuth2SignIn } from './oauth2-sign-in.service';
import { OAuth2ApplicationStore } from './oauth2-application.store';
import { OAuth2RecordStore } from './oauth2-record.store';
import { OAuth2TokensModule } from './oauth2-tokens.module';

/**
 * The OAuth2 / OpenID Connect provider for CI servers (Woodpecker, Drone): the applications API, the
 * provider's endpoints at Forgejo's paths (mounted in bootstrap.ts), and its sign-in and consent page.
 */
@Module({
  imports: [UsersModule, AuthModule, PagesModule, OAuth2TokensModule, ClaimsModule],
  controllers: [OAuth2ApplicationsController, OAuth2InteractionController],
  providers: [OAuth2RecordStore, OAuth2ApplicationStore, OAuth2ApplicationsService, OAuth2Provider, OAuth2SignIn, SecretBox],
  exports: [OAuth2Provider],
})
export class OAuth2Module implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(cookieParser()).forRoutes({ path: INTERACTION_ROUTE, method: RequestMethod.ALL });
  }
}
