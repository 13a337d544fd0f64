import { Injectable } from '@nestjs/common';
import { NotFoundError } from '../common/errors';
import type { RefLookup } from '../git/git-objects';
import { isPlainRevision } from '../git/git-refs';
import type { UserWire } from '../users/user.wire';
import { UserAccounts } from '../users/user-accounts';
import { toUserWire } from '../users/user.mapper';
import type { AuthContext } from '../auth/auth-context';
import type { ContentRepository } from './content-repository';
import type { NamedRef } from './content.mapper';
import { SiteUrls } from '../common/site-urls';
import { GitReads } from '../git/git-reads';

/**
 * Revisions as callers name them (Forgejo's RepoRefForAPI): a branch first, then a tag, then a commit id; no
 * name means the default branch. And the Anvil users behind commit e-mail addresses.
 */
@Injectable()
export class ContentRefs {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly reads: GitReads,
    private readonly users: UserAccounts,
  ) {}

  /**
   * `via` is how refs are read: GitRefs (a command each, inside a slot the caller holds) by default, or
   * GitObjects (the batch readers, with no slot held).
   */
  async resolve(target: ContentRepository, name: string | undefined, via: RefLookup = this.reads.refs): Promise<NamedRef | null> {
    const wanted = name === undefined || name === '' ? target.repo.defaultBranch : name;
    if (!isPlainRevision(wanted)) return null;
    // A branch wins over a tag of the same name, as in Forgejo.
    const found = await via.peelFirst(target.dir, [`refs/heads/${wanted}`, `refs/tags/${wanted}`]);
    if (found) return { name: wanted, kind: found.ref.startsWith('refs/heads/') ? 'branch' : 'tag', commit: found.commit };
    if (/^[0-9a-fA-F]{4,64}$/.test(wanted)) {
      const commit = await via.resolveCommit(target.dir, wanted);
      if (commit) return { name: commit, kind: 'commit', commit };
    }
    return null;
  }

  async require(target: ContentRepository, name: string | undefined, via: RefLookup = this.reads.refs): Promise<NamedRef> {
    const ref = await this.resolve(target, name, via);
    if (!ref) throw new NotFoundError();
    return ref;
  }

  /**
   * Where the path of /raw/{ref}/{filepath} splits (Forgejo's RepoRefAny): the longest leading run of segments
   * that names a branch or tag (all candidates looked up in one call), or a leading full commit id; otherwise the
   * default branch and the whole path.
   */
  async split(target: ContentRepository, path: string, via: RefLookup = this.reads.refs): Promise<{ ref: NamedRef | null; path: string }> {
    const segments = path.split('/');
    const candidates = segments
      .slice(0, -1)
      .map((_, index) => segments.slice(0, index + 1).join('/'))
      .filter(isPlainRevision);
    const refs = await via.peelRefs(
      target.dir,
      candidates.flatMap((name) => [`refs/heads/${name}`, `refs/tags/${name}`]),
    );
    for (const name of [...candidates].reverse()) {
      const named = namedRef(refs, name);
      if (named) return { ref: named, path: path.slice(name.length + 1) };
    }
    if (segments.length > 1 && /^([0-9a-f]{40}|[0-9a-f]{64})$/.test(segments[0])) {
      const commit = await via.resolveCommit(target.dir, segments[0]);
      if (commit) return { ref: { name: commit, kind: 'commit', commit }, path: segments.slice(1).join('/') };
    }
    return { ref: await this.resolve(target, undefined, via), path };
  }

  /** The Anvil users whose e-mail addresses appear, by lowercased address. */
  async usersByEmail(viewer: AuthContext, emails: string[]): Promise<Map<string, UserWire>> {
    const found = new Map<string, UserWire>();
    for (const email of new Set(emails.map((address) => address.toLowerCase()))) {
      const id = await this.users.emailOwnerId(email);
      if (id === null) continue;
      const user = await this.users.byId(id);
      if (user) found.set(email, toUserWire(user, viewer, this.siteUrls));
    }
    return found;
  }

  async usernamesByEmail(viewer: AuthContext, emails: string[]): Promise<Map<string, string>> {
    const users = await this.usersByEmail(viewer, emails);
    return new Map([...users].map(([email, user]) => [email, user.login]));
  }
}

/** A branch wins over a tag of the same name, as in Forgejo. */
function namedRef(refs: Map<string, string>, name: string): NamedRef | null {
  const branch = refs.get(`refs/heads/${name}`);
  if (branch) return { name, kind: 'branch', commit: branch };
  const tag = refs.get(`refs/tags/${name}`);
  if (tag) return { name, kind: 'tag', commit: tag };
  return null;
}
