import { Injectable } from '@nestjs/common';
import { NotFoundError } from '../common/errors';
import { GitTrees } from '../git/git-trees';
import type { UserWire } from '../users/user.wire';
import { UserStore } from '../users/user.store';
import { UsersService } from '../users/users.service';
import { toUserWire } from '../users/user.mapper';
import type { AuthContext } from '../auth/auth-context';
import type { ContentRepository } from './content-repository';
import type { NamedRef } from './content.mapper';

/**
 * Revisions as callers name them (Forgejo's RepoRefForAPI): a branch first, then a tag, then a commit id; no
 * name means the default branch. And the Anvil users behind commit e-mail addresses.
 */
@Injectable()
export class ContentRefs {
  constructor(
    private readonly trees: GitTrees,
    private readonly users: UserStore,
    private readonly usersService: UsersService,
  ) {}

  async resolve(target: ContentRepository, name: string | undefined): Promise<NamedRef | null> {
    const wanted = name === undefined || name === '' ? target.repo.defaultBranch : name;
    const branch = await this.trees.resolveCommit(target.dir, `refs/heads/${wanted}`);
    if (branch) return { name: wanted, kind: 'branch', commit: branch };
    const tag = await this.trees.resolveCommit(target.dir, `refs/tags/${wanted}`);
    if (tag) return { name: wanted, kind: 'tag', commit: tag };
    if (/^[0-9a-fA-F]{4,64}$/.test(wanted)) {
      const commit = await this.trees.resolveCommit(target.dir, wanted);
      if (commit) return { name: commit, kind: 'commit', commit };
    }
    return null;
  }

  async require(target: ContentRepository, name: string | undefined): Promise<NamedRef> {
    const ref = await this.resolve(target, name);
    if (!ref) throw new NotFoundError();
    return ref;
  }

  /**
   * Where the path of /raw/{ref}/{filepath} splits: the longest leading run of segments that names a branch or
   * tag, or a leading commit id; otherwise the default branch and the whole path.
   */
  async split(target: ContentRepository, path: string): Promise<{ ref: NamedRef | null; path: string }> {
    const segments = path.split('/');
    for (let count = segments.length - 1; count >= 1; count--) {
      const name = segments.slice(0, count).join('/');
      const ref = await this.resolve(target, name);
      if (ref) return { ref, path: segments.slice(count).join('/') };
    }
    return { ref: await this.resolve(target, undefined), path };
  }

  /** The Anvil users whose e-mail addresses appear, by lowercased address. */
  async usersByEmail(viewer: AuthContext, emails: string[]): Promise<Map<string, UserWire>> {
    const found = new Map<string, UserWire>();
    for (const email of new Set(emails.map((address) => address.toLowerCase()))) {
      const id = await this.users.emailOwnerId(email);
      if (id === null) continue;
      const user = await this.users.findById(id);
      if (user) found.set(email, toUserWire(user, viewer, this.usersService.site));
    }
    return found;
  }

  async usernamesByEmail(viewer: AuthContext, emails: string[]): Promise<Map<string, string>> {
    const users = await this.usersByEmail(viewer, emails);
    return new Map([...users].map(([email, user]) => [email, user.login]));
  }
}
