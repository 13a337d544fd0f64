import { Module, OnModuleInit } from '@nestjs/common';
import { AccessTokenStore } from './access-token.store';
import { AccessTokensController } from './access-tokens.controller';
import { AccessTokensService } from './access-tokens.service';
import { CurrentUserController } from './current-user.controller';
import { OrganizationStore } from './organization.store';
import { UserVisibility } from './user-visibility';
import { UserStore } from './user.store';
import { UsersService } from './users.service';

@Module({
  controllers: [CurrentUserController, AccessTokensController],
  providers: [UserStore, AccessTokenStore, OrganizationStore, UserVisibility, UsersService, AccessTokensService],
  exports: [UserStore, OrganizationStore, UserVisibility, UsersService, AccessTokensService],
})
export class UsersModule implements OnModuleInit {
  constructor(
    private readonly users: UsersService,
    private readonly tokens: AccessTokenStore,
  ) {}

  onModuleInit(): void {
    this.users.onUserDeleted((tx, user) => this.tokens.deleteAllOfUser(tx, user.id));
  }
}
