import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module';
import { OAuth2AccessTokens } from './oauth2-access-tokens';
import { OAuth2ApplicationStore } from './oauth2-application.store';
import { OAuth2RecordStore } from './oauth2-record.store';

/**
 * The OAuth2 tables and the access-token lookup the credential chain asks (src/auth imports this module;
 * the provider and its routes live in OAuth2Module).
 */
@Module({
  imports: [UsersModule],
  providers: [OAuth2RecordStore, OAuth2ApplicationStore, OAuth2AccessTokens],
  exports: [OAuth2RecordStore, OAuth2ApplicationStore, OAuth2AccessTokens],
})
export class OAuth2StoreModule {}
