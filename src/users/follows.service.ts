import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { Clock } from '../common/time';
import { Transactions } from '../database/transactions';
import { FollowStore } from './follow.store';
import { UserDirectoryService } from './user-directory.service';
import { UserEntity } from './user.entity';
import { UserVisibility } from './user-visibility';
import { UserListVisibility } from './user-visibility.condition';
import { UsersService } from './users.service';

/** The signed-in caller, as the follow routes receive it (their guard has checked sign-in). */
type SignedInViewer = AuthContext & { user: UserEntity };

/**
 * Following users and organisations. Lists show only what the caller may see in lists
 * (docs/visibility.md); the single-user checks answer 404 for anything the caller may not see, as if it did not exist.
 */
@Injectable()
export class FollowsService {
  constructor(
    private readonly follows: FollowStore,
    private readonly users: UsersService,
    private readonly directory: UserDirectoryService,
    private readonly visibility: UserVisibility,
    private readonly listVisibility: UserListVisibility,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
  ) {}

  /** GET /user/followers */
  myFollowers(viewer: SignedInViewer, page: PageQuery): Promise<Page<UserEntity>> {
    return this.follows.followers(viewer.user.id, viewer, page);
  }

  /** GET /user/following */
  myFollowing(viewer: SignedInViewer, page: PageQuery): Promise<Page<UserEntity>> {
    return this.follows.following(viewer.user.id, viewer, page);
  }

  /** GET /user/following/{username}: resolves when the caller follows the user, else 404 (yourself: 404). */
  async assertIFollow(viewer: SignedInViewer, name: string): Promise<void> {
    const target = await this.target(viewer, name);
    if (!(await this.follows.followsVisible(viewer.user.id, target.id, viewer))) throw new NotFoundError();
  }

  /** PUT /user/following/{username}: idempotent; following yourself does nothing. */
  async follow(viewer: SignedInViewer, name: string): Promise<void> {
    const target = await this.target(viewer, name);
    if (target.id === viewer.user.id) return;
    if (!(await this.listVisibility.isVisibleUser(viewer, target))) throw new NotFoundError();
    const now = this.clock.nowUnix();
    await this.transactions.run((tx) => this.follows.insert(tx, viewer.user.id, target.id, now));
  }

  /**
   * DELETE /user/following/{username}: always 204 for a known user; a user the caller cannot see is
   * unknown to them, unless they were following it (then they know it, and may still unfollow).
   */
  async unfollow(viewer: SignedInViewer, name: string): Promise<void> {
    const target = await this.target(viewer, name);
    if (target.id === viewer.user.id) return;
    const removed = await this.transactions.run((tx) => this.follows.delete(tx, viewer.user.id, target.id));
    if (!removed && !(await this.listVisibility.isVisibleUser(viewer, target))) throw new NotFoundError();
  }

  /** GET /users/{username}/followers (a users-group-B route, docs/check-order.md; the guard has checked sign-in). */
  async followersOf(viewer: AuthContext, name: string, page: PageQuery): Promise<Page<UserEntity>> {
    const user = await this.directory.visibleByName(viewer, name);
    return this.follows.followers(user.id, viewer, page);
  }

  /** GET /users/{username}/following (group B). */
  async followingOf(viewer: AuthContext, name: string, page: PageQuery): Promise<Page<UserEntity>> {
    const user = await this.directory.visibleByName(viewer, name);
    return this.follows.following(user.id, viewer, page);
  }

  /** GET /users/{username}/following/{target} (group B): resolves when the user follows the target, else 404. */
  async assertFollows(viewer: AuthContext, name: string, targetName: string): Promise<void> {
    const user = await this.directory.visibleByName(viewer, name);
    const target = await this.users.byName(targetName);
    if (!(await this.follows.followsVisible(user.id, target.id, viewer))) throw new NotFoundError();
  }

  /** The user or organisation named as the object of a /user/following route: unknown → 404, public-only → 403. */
  private async target(viewer: AuthContext, name: string): Promise<UserEntity> {
    const target = await this.users.byName(name);
    this.visibility.assertTokenMaySee(viewer, target);
    return target;
  }
}
