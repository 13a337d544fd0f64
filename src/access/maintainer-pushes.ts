import { Injectable } from '@nestjs/common';
import type { RepositoryEntity } from '../repos/repository.entity';
import type { UserEntity } from '../users/user.entity';
import { AccessSubject, NO_GRANTS, PolicyOwner, PolicyRepository, resolvePermission } from './access-policy';
import { AccessStore } from './access.store';
import type { RepositoryPermission } from './repository-permission';

// Why: the poster of a pull request from a fork may let the base's maintainers push to its head branch
// (`allow_maintainer_edit`), as Forgejo does. Every door that moves a branch (git over HTTP and SSH, the contents
// API) asks this one rule, beside the caller's own write on the code, which the doors ask first
// (docs/pull-requests.md, "Maintainers on the head branch").

/** A repository whose branch is to be pushed, with its owner. */
export interface PushedRepository {
  repo: RepositoryEntity;
  owner: UserEntity;
}

/** One ref a push moves, as git gives it to pre-receive. */
export interface PushedRef {
  oldId: string;
  newId: string;
  ref: string;
}

const BRANCH_PREFIX = 'refs/heads/';
const ZERO_ID = /^0+$/;

/**
 * Whether a caller may push to a branch of a repository they do not write as a maintainer of an open pull
 * request from it: there is an open, unmerged pull request whose head is that repository and branch, whose
 * poster allows maintainers to edit and still writes the head's code (a poster who lost it has nothing to lend),
 * and the caller writes the code of its base repository. Read at every ask, never cached, so that closing or
 * merging the pull request, or switching the permission off, holds for the next push on every instance.
 */
@Injectable()
export class MaintainerPushes {
  constructor(private readonly store: AccessStore) {}

  /** `branch` null: whether some branch of the repository may be pushed so (a transport's first question). */
  async mayPush(caller: AccessSubject, head: PushedRepository, branch: string | null): Promise<boolean> {
    if (caller.userId === null) return false;
    const pulls = await this.store.maintainerEditPulls(head.repo.id, branch);
    if (pulls.length === 0) return false;
    const bases = await this.store.repositoriesWithOwners([...new Set(pulls.map((pull) => pull.baseRepoId))]);
    const posters = await this.store.usersByIds(pulls.map((pull) => pull.posterId));
    for (const pull of pulls) {
      const base = bases.get(pull.baseRepoId);
      const poster = posters.get(pull.posterId);
      if (!base || !poster) continue;
      const posterSubject = { userId: poster.id, isAdmin: poster.isAdmin, restricted: poster.isRestricted };
      if (!(await this.permission(posterSubject, head.repo, head.owner)).canWrite('repo.code')) continue;
      if ((await this.permission(caller, base.repo, base.owner)).canWrite('repo.code')) return true;
    }
    return false;
  }

  /**
   * pre-receive of a push admitted on this rule alone (the pusher does not write the code): each ref must be an
   * existing branch that the rule lets the pusher move; tags, other refs, and the creation or deletion of a
   * branch stay the code's writers'. The refusal of the first ref that fails, in Forgejo's words, or null.
   */
  async refusal(pusher: Pick<UserEntity, 'id' | 'name' | 'isAdmin' | 'isRestricted'>, head: PushedRepository, refs: PushedRef[]): Promise<string | null> {
    const subject = { userId: pusher.id, isAdmin: pusher.isAdmin, restricted: pusher.isRestricted };
    const place = `${head.owner.name}/${head.repo.name}`;
    for (const ref of refs) {
      if (!ref.ref.startsWith(BRANCH_PREFIX)) return `User '${pusher.name}' is not allowed to push to repository '${place}'.`;
      const branch = ref.ref.slice(BRANCH_PREFIX.length);
      const moves = !ZERO_ID.test(ref.oldId) && !ZERO_ID.test(ref.newId);
      if (!moves || !(await this.mayPush(subject, head, branch))) return `User '${pusher.name}' is not allowed to push to branch '${branch}' in '${place}'.`;
    }
    return null;
  }

  private async permission(subject: AccessSubject, repo: PolicyRepository, owner: PolicyOwner): Promise<RepositoryPermission> {
    const decidedAlone = subject.userId === null || subject.isAdmin || subject.userId === repo.ownerId;
    return resolvePermission(subject, repo, owner, decidedAlone ? NO_GRANTS : await this.store.grants(subject.userId!, repo));
  }
}
