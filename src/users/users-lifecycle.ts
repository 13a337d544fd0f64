import { Injectable } from '@nestjs/common';
import type { UserDeleted } from '../events/lifecycle-events';
import { AccessTokenStore } from './access-token.store';
import { FollowStore } from './follow.store';
import { OrganizationStore } from './organization.store';

/** What the users module does on lifecycle events (src/events/subscribers.ts). */
@Injectable()
export class UsersLifecycle {
  constructor(
    private readonly tokens: AccessTokenStore,
    private readonly follows: FollowStore,
    private readonly organizations: OrganizationStore,
  ) {}

  /** The user's tokens; follows of and by the user (fixing the other side's counters); team and organisation memberships. */
  async userDeleted({ tx, user }: UserDeleted): Promise<void> {
    await this.tokens.deleteAllOfUser(tx, user.id);
    await this.follows.deleteAllOf(tx, user.id);
    await this.organizations.removeAllMembershipsOf(tx, user.id);
  }
}
