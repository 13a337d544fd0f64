import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { OAuth2TokensModule } from '../oauth2/oauth2-tokens.module';
import { UsersModule } from '../users/users.module';
import { AuthenticationMiddleware } from './authentication.middleware';
import { CredentialChain } from './credentials';
import { RouteAuthGuard } from './route-auth';

@Module({
  imports: [UsersModule, OAuth2TokensModule],
  providers: [CredentialChain, AuthenticationMiddleware, { provide: APP_GUARD, useClass: RouteAuthGuard }],
  exports: [AuthenticationMiddleware, CredentialChain],
})
export class AuthModule {}
