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
import { RepositoryStore } from './repository.store';

const NO_PERMISSION: PermissionWire = { admin: false, push: false, pull: false };

/** Turns repository rows into `Repository` JSON for a viewer, loading the owners of a whole page at once. */
@Injectable()
export class RepositoryViews {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly users: UserAccounts,
    private readonly access: RepositoryAccess,
    private readonly repositories: RepositoryStore,
  ) {}

  /** The repository's JSON, with its source's when it is a fork the viewer may see the source of. */
  async one(repo: RepositoryEntity, owner: UserEntity, viewer: AuthContext, permission: PermissionWire): Promise<RepositoryWire> {
    const parents = repo.isFork && repo.forkId ? await this.parents([repo], await this.access.of(viewer)) : new Map<number, RepositoryWire>();
    return toRepositoryWire(repo, owner, viewer, permission, this.siteUrls, undefined, parents.get(repo.forkId) ?? null);
  }

  /**
   * The `parent` JSON of forks, by source id: only sources the viewer has access to (as Forgejo shows a parent
   * only then), one level deep.
   */
  private async parents(repos: RepositoryEntity[], access: ViewerAccess): Promise<Map<number, RepositoryWire>> {
    const ids = [...new Set(repos.filter((repo) => repo.isFork && repo.forkId).map((repo) => repo.forkId))];
    const found = new Map<number, RepositoryWire>();
    if (ids.length === 0) return found;
    const sources = await this.repositories.findByIds(ids);
    const owners = new Map((await this.users.byIds([...new Set(sources.map((source) => source.ownerId))])).map((owner) => [owner.id, owner]));
    const rows = sources.flatMap((repo) => {
      const owner = owners.get(repo.ownerId);
      return owner ? [{ repo, owner }] : [];
    });
    const permissions = await this.access.permissions(access, rows);
    for (const { repo, owner } of rows) {
      const permission = permissions.get(repo.id);
      if (!permission || !(permission.pull || permission.push || permission.admin)) continue;
      found.set(repo.id, toRepositoryWire(repo, owner, access.viewer, permission, this.siteUrls));
    }
    return found;
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
    const parents = await this.parents(page.items, access);
    // One owner's JSON serves all of their repositories on the page (a user's list: all thirty).
    const ownerWires = new Map<number, UserWire>();
    const site = this.siteUrls;
    const items: RepositoryWire[] = [];
    for (const { repo, owner } of rows) {
      let ownerWire = ownerWires.get(owner.id);
      if (!ownerWire) ownerWires.set(owner.id, (ownerWire = toRepositoryOwnerWire(owner, viewer, site)));
      items.push(toRepositoryWire(repo, owner, viewer, permissions.get(repo.id) ?? NO_PERMISSION, site, ownerWire, parents.get(repo.forkId) ?? null));
    }
    return { items, total: page.total };
  }
}
