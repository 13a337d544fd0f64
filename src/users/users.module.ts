import { Module, OnModuleInit } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { AccessTokenStore } from './access-token.store';
import { AccessTokensController } from './access-tokens.controller';
import { AccessTokensService } from './access-tokens.service';
import { CurrentUserController } from './current-user.controller';
import { FollowStore } from './follow.store';
import { FollowsController } from './follows.controller';
import { FollowsService } from './follows.service';
import { OrganizationMemberships } from './organization-memberships';
import { OrganizationStore } from './organization.store';
import { OrganizationsController } from './organizations.controller';
import { OrganizationsService } from './organizations.service';
import { UserAccounts } from './user-accounts';
import { UserDirectoryService } from './user-directory.service';
import { UserSearchStore } from './user-search.store';
import { UserVisibility } from './user-visibility';
import { UserListVisibility } from './user-visibility.condition';
import { UserStore } from './user.store';
import { UsersController } from './users.controller';
import { UsersService } from './users.service';
import { ClaimsModule } from '../claims/claims.module';

@Module({
  imports: [AccessModule, ClaimsModule],
  controllers: [CurrentUserController, AccessTokensController, UsersController, FollowsController, OrganizationsController],
  providers: [
    UserStore,
    AccessTokenStore,
    OrganizationStore,
    UserVisibility,
    UsersService,
    AccessTokensService,
    FollowStore,
    FollowsService,
    UserSearchStore,
    UserListVisibility,
    UserDirectoryService,
    OrganizationsService,
    UserAccounts,
    OrganizationMemberships,
  ],
  exports: [
    UserAccounts,
    OrganizationMemberships,
    UserVisibility,
    UsersService,
    AccessTokensService,
    UserListVisibility,
    UserDirectoryService,
    FollowsService,
    OrganizationsService,
    AccessModule,
  ],
})
export class UsersModule implements OnModuleInit {
  constructor(
    private readonly users: UsersService,
    private readonly tokens: AccessTokenStore,
    private readonly follows: FollowStore,
    private readonly organizations: OrganizationStore,
  ) {}

  onModuleInit(): void {
    this.users.onUserDeleted((tx, user) => this.tokens.deleteAllOfUser(tx, user.id));
    // Follows of and by the user (fixing the other side's counters), and team and organisation memberships.
    this.users.onUserDeleted((tx, user) => this.follows.deleteAllOf(tx, user.id));
    this.users.onUserDeleted((tx, user) => this.organizations.removeAllMembershipsOf(tx, user.id));
  }
}
