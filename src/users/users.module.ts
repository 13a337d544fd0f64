import { Module } from '@nestjs/common';
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
import { UsersLifecycle } from './users-lifecycle';
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
    UsersLifecycle,
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
export class UsersModule {}
