import { Injectable } from '@nestjs/common';
import { InvalidInputError } from '../common/errors';
import type { UserDeleted } from '../events/lifecycle-events';
import { PackageStore } from './package.store';

/** What the package registry does on lifecycle events (src/events/subscribers.ts). */
@Injectable()
export class PackagesLifecycle {
  constructor(private readonly store: PackageStore) {}

  /** As Forgejo (ErrUserOwnPackages): a user or organisation that still owns packages cannot be deleted. */
  async userDeleted({ tx, user }: UserDeleted): Promise<void> {
    if (await this.store.ownsAny(user.id, tx)) throw new InvalidInputError(`user still has ownership of packages [uid: ${user.id}]`);
  }
}
