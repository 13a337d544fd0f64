import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module';
import { OAuth2AccessTokens } from './oauth2-access-tokens';
import { OAuth2RecordStore } from './oauth2-record.store';

/**
 * The OAuth2 access-token lookup the credential chain asks (src/auth imports this module; the provider and
 * its routes live in OAuth2Module, which provides the OAuth2 stores for itself). Only the lookup is exported:
 * the stores stay inside src/oauth2. They hold nothing but the data source, so one instance here and one in
 * OAuth2Module behave as one.
 */
@Module({
  imports: [UsersModule],
  providers: [OAuth2RecordStore, OAuth2AccessTokens],
  exports: [OAuth2AccessTokens],
})
export class OAuth2TokensModule {}
