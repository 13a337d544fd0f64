import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { ForbiddenError, NotFoundError } from '../common/errors';
import { OrganizationStore } from './organization.store';
import { UserEntity, Visibility } from './user.entity';
import { SqlCondition, visibleUsersCondition } from './user-visibility.condition';

/**
 * Who may see a user or an organisation when it is named directly (docs/visibility.md):
 * public → everyone; limited → signed-in callers (a restricted caller only for organisations it belongs to);
 * private → the user themselves and site admins, or, for an organisation, its members.
 */
@Injectable()
export class UserVisibility {
  constructor(private readonly organizations: OrganizationStore) {}

  async canSee(viewer: AuthContext, user: UserEntity): Promise<boolean> {
    if (user.visibility === Visibility.Public) return true;
    if (!viewer.user) return false;
    if (viewer.isSelfOrAdmin(user.id)) return true;
    if (user.isOrganization) {
      const member = await this.organizations.isMember(user.id, viewer.user.id);
      if (member) return true;
      return user.visibility === Visibility.Limited && !viewer.user.isRestricted;
    }
    return user.visibility === Visibility.Limited && !viewer.user.isRestricted;
  }

  /**
   * The lookup order of users group A/B after the user is found: public-only token on a non-public user →
   * 403; not visible → 404.
   */
  async assertVisible(viewer: AuthContext, user: UserEntity): Promise<void> {
    this.assertTokenMaySee(viewer, user);
    if (!(await this.canSee(viewer, user))) throw new NotFoundError();
  }

  /** The public-only token step alone (docs/check-order.md): a non-public user or organisation → 403. */
  assertTokenMaySee(viewer: AuthContext, user: UserEntity): void {
    if (viewer.publicOnly && user.visibility !== Visibility.Public && !viewer.is(user.id)) {
      throw new ForbiddenError(user.isOrganization ? 'token scope is limited to public orgs' : 'token scope is limited to public users');
    }
  }

  /**
   * The LIST rule of docs/visibility.md (lists and search: private users who follow the viewer or share an
   * organisation with them are included) as an SQL condition on the `user` alias `alias`; see
   * user-visibility.condition.ts.
   */
  listCondition(viewer: AuthContext, alias: string): SqlCondition {
    return visibleUsersCondition(viewer, alias);
  }
}
