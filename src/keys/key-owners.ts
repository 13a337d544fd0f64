import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { NotFoundError } from '../common/errors';
import { UserEntity, Visibility } from '../users/user.entity';
import { UserVisibility } from '../users/user-visibility';
import { UsersService } from '../users/users.service';

/**
 * Keys one user may hold, of each kind (SECURITY.md): GET /{user}.keys and /{user}.gpg serve them all to
 * anyone, so their number (and each key's size) is bounded.
 */
export const MAX_KEYS_PER_USER = 100;
export const TOO_MANY_KEYS = `too many keys: a user may hold at most ${MAX_KEYS_PER_USER} keys of a kind`;

/** Finds the user whose keys are listed, with the visibility rules of each kind of listing. */
@Injectable()
export class KeyOwners {
  constructor(
    private readonly users: UsersService,
    private readonly visibility: UserVisibility,
  ) {}

  /** Users group B (docs/check-order.md): lookup 404 → public-only 403 → invisible 404. */
  async visibleTo(viewer: AuthContext, username: string): Promise<UserEntity> {
    const user = await this.users.byName(username);
    await this.visibility.assertVisible(viewer, user);
    return user;
  }

  /** The plain-text listings outside the API: an unknown or invisible user is simply not there. */
  async visibleOrAbsent(viewer: AuthContext, username: string): Promise<UserEntity> {
    const user = await this.users.byName(username);
    const publicOnlyMiss = viewer.publicOnly && user.visibility !== Visibility.Public && !viewer.is(user.id);
    if (publicOnlyMiss || !(await this.visibility.canSee(viewer, user))) throw new NotFoundError();
    return user;
  }
}

/** A `{id}` path segment: an integer; anything else is "not found" (docs/api-conventions.md). */
export function parseKeyId(segment: string): number {
  const id = /^\d{1,16}$/.test(segment) ? Number(segment) : NaN;
  if (!Number.isSafeInteger(id) || id <= 0) throw new NotFoundError();
  return id;
}
