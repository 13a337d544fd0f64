import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import type { PermissionWire } from '../access/repository-permission';
import { Page } from '../common/paging';
import { UserEntity } from '../users/user.entity';
import type { UserWire } from '../users/user.wire';
import { UserAccounts } from '../users/user-accounts';
import { RepositoryAccess, ViewerAccess } from './repository-access';
import type { RepositoryEntity } from './repository.entity';
import { toRepositoryOwnerWire, toRepositoryWire } from './repository.mapper';
import type { RepositoryWire } from './repository.wire';
import { SiteUrls } from '../common/site-urls';

const NO_PERMISSION: PermissionWire = { admin: false, push: false, pull: false };

/** Turns repository rows into `Repository` JSON for a viewer, loading the owners of a whole page at once. */
@Injectable()
export class RepositoryViews {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly users: UserAccounts,
    private readonly access: RepositoryAccess,
  ) {}

  one(repo: RepositoryEntity, owner: UserEntity, viewer: AuthContext, permission: PermissionWire): RepositoryWire {
    return toRepositoryWire(repo, owner, viewer, permission, this.siteUrls);
  }

  /** `knownOwners`: owners the caller has loaded already (a list of one owner's repositories), not read again. */
  async page(page: Page<RepositoryEntity>, viewer: AuthContext, access: ViewerAccess, knownOwners: UserEntity[] = []): Promise<Page<RepositoryWire>> {
    const owners = new Map(knownOwners.map((owner) => [owner.id, owner]));
    const missing = [...new Set(page.items.map((repo) => repo.ownerId))].filter((id) => !owners.has(id));
    if (missing.length > 0) for (const owner of await this.users.byIds(missing)) owners.set(owner.id, owner);
    const rows = page.items.flatMap((repo) => {
      const owner = owners.get(repo.ownerId);
      return owner ? [{ repo, owner }] : [];
    });
    const permissions = await this.access.permissions(access, rows);
    // One owner's JSON serves all of their repositories on the page (a user's list: all thirty).
    const ownerWires = new Map<number, UserWire>();
    const site = this.siteUrls;
    const items: RepositoryWire[] = [];
    for (const { repo, owner } of rows) {
      let ownerWire = ownerWires.get(owner.id);
      if (!ownerWire) ownerWires.set(owner.id, (ownerWire = toRepositoryOwnerWire(owner, viewer, site)));
      items.push(toRepositoryWire(repo, owner, viewer, permissions.get(repo.id) ?? NO_PERMISSION, site, ownerWire));
    }
    return { items, total: page.total };
  }
}
