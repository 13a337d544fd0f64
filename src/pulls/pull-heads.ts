import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { mayReadPullHead } from '../access/pull-rules';
import { RepositoryPolicy, RepositoryTarget } from '../access/repository-policy';
import { GitPools } from '../git/git-pools';
import { GitRefs } from '../git/git-refs';
import { GitWrites } from '../git/git-writes';
import { RefPacking } from '../git/ref-packing';
import { RepositoryPaths } from '../git/repository-paths';
import { RepositoryDirectory } from '../repos/repository-directory';
import type { RepositoryEntity } from '../repos/repository.entity';
import { UserAccounts } from '../users/user-accounts';
import type { UserEntity } from '../users/user.entity';
import type { PullRequestEntity } from './pull-request.entity';

/** The ref of the base repository that follows a pull request's head. */
export function pullHeadRef(index: number): string {
  return `refs/pull/${index}/head`;
}

/** A repository a pull request's head branch lives in, with its directory. */
export interface HeadRepository {
  repo: RepositoryEntity;
  owner: UserEntity;
  dir: string;
}

/** What `head` of a new pull request or a comparison names: the repository (as the caller sees it) and branch. */
export interface ResolvedHead {
  target: RepositoryTarget;
  branch: string;
  sameRepository: boolean;
}

/**
 * Heads in other repositories of the fork network (docs/pull-requests.md, "Heads in forks"): which repository
 * `owner:branch` names, and how a fork's head commits reach the base repository: through the network's object
 * pool, which fetches the one branch from the fork (only the objects it lacks move), never a copy of the fork.
 */
@Injectable()
export class PullHeads {
  private readonly logger = new Logger('PullHeads');

  constructor(
    private readonly repositories: RepositoryDirectory,
    private readonly users: UserAccounts,
    private readonly paths: RepositoryPaths,
    private readonly pools: GitPools,
    private readonly writes: GitWrites,
    private readonly refs: GitRefs,
    private readonly policy: RepositoryPolicy,
    private readonly refPacking: RefPacking,
  ) {}

  /**
   * Forgejo's parseCompareInfo: `branch` is a branch of the base; `owner:branch` one of the owner's fork of the
   * base, of the base's parent when the owner owns it, or of the base itself when the owner is the base's. Null
   * (404) for an unknown owner, an owner with neither, more than one colon, or a head the caller may not read
   * the code of. `owner/name:branch` names no user and is not found, as in Forgejo.
   */
  async resolve(base: RepositoryTarget, head: string): Promise<ResolvedHead | null> {
    const parts = head.split(':');
    if (parts.length === 1) return { target: base, branch: parts[0], sameRepository: true };
    if (parts.length !== 2) return null;
    const user = await this.users.byName(parts[0]);
    if (!user) return null;
    if (user.id === base.owner.id) return { target: base, branch: parts[1], sameRepository: true };
    let repo = await this.repositories.forkOf(user.id, base.repo.id);
    if (!repo && base.repo.isFork && base.repo.forkId) {
      const parent = await this.repositories.byId(base.repo.forkId);
      if (parent && parent.ownerId === user.id) repo = parent;
    }
    if (!repo) return null;
    try {
      const target = await this.policy.open(base.viewer, repo, user);
      if (!(await mayReadPullHead(target))) return null;
      return { target, branch: parts[1], sameRepository: false };
    } catch {
      // Forgejo: a head whose code the caller cannot read is not found.
      return null;
    }
  }

  /** The head repository of a pull request: the base's own place, another's, or null when it was deleted. */
  async of(pull: PullRequestEntity, base: { repo: RepositoryEntity; owner: UserEntity }, tx?: EntityManager): Promise<HeadRepository | null> {
    if (pull.headRepoId === pull.baseRepoId) return { ...base, dir: this.paths.repository(base.owner.name, base.repo.name) };
    const repo = await this.repositories.byId(pull.headRepoId, tx);
    const owner = repo ? await this.users.byId(repo.ownerId, tx) : null;
    return repo && owner ? { repo, owner, dir: this.paths.repository(owner.name, repo.name) } : null;
  }

  place(repo: RepositoryEntity, owner: UserEntity): HeadRepository {
    return { repo, owner, dir: this.paths.repository(owner.name, repo.name) };
  }

  /**
   * Makes `commit` of the head branch reachable in the base repository and points `refs/pull/{index}/head` at
   * it. A head in a fork of the same network: the pool fetches that branch from the fork (the objects the pool
   * lacks: the fork's new commits), so the base reaches them through its alternates and keeps reaching them
   * after the fork is gone (the pool never drops objects while a member exists). Callers hold a git slot.
   */
  async publish(base: HeadRepository, head: HeadRepository, branch: string, index: number, commit: string): Promise<void> {
    if (head.repo.id !== base.repo.id) await this.reach(base, head, branch, commit);
    await this.writes.setRef(base.dir, pullHeadRef(index), commit);
    this.refPacking.wrote(base.dir, 'refs/pull');
  }

  /** Makes the commit of a head branch in another repository reachable in the base; throws when it cannot. */
  async reach(base: HeadRepository, head: HeadRepository, branch: string, commit: string): Promise<void> {
    if (await this.pools.hasCommit(base.dir, commit)) return;
    const pool = base.repo.objectPool;
    // Forgejo's rules only pair a repository with its direct forks and its parent: always one network, one pool.
    if (!pool || pool !== head.repo.objectPool)
      throw new Error(`${head.owner.name}/${head.repo.name} shares no object pool with ${base.owner.name}/${base.repo.name}`);
    try {
      await this.pools.shareBranch(pool, head.repo.id, head.dir, branch);
    } catch (error) {
      // Two pushes at once fetch the same branch: the one that lost the ref lock may find the objects there.
      this.logger.warn(`fetching ${head.owner.name}/${head.repo.name}:${branch} into the pool: ${(error as Error).message}`);
    }
    if (!(await this.pools.hasCommit(base.dir, commit)))
      throw new Error(`commit ${commit} of ${head.owner.name}/${head.repo.name} did not reach ${base.owner.name}/${base.repo.name}`);
  }

  /**
   * The head's commit now, reachable in the base: the head branch's tip (published to `refs/pull/{n}/head` when
   * it moved since), else, once the branch or its repository is gone, what `refs/pull/{n}/head` holds. Callers
   * hold a git slot.
   */
  async tip(base: HeadRepository, pull: PullRequestEntity): Promise<string | null> {
    const pullRef = pullHeadRef(pull.repoIndex);
    const headRef = `refs/heads/${pull.headBranch}`;
    const same = pull.headRepoId === pull.baseRepoId;
    const inBase = await this.refs.peelRefs(base.dir, same ? [headRef, pullRef] : [pullRef]);
    const head = same ? base : await this.of(pull, base);
    const branchTip = same ? inBase.get(headRef) : head ? (await this.refs.peelRefs(head.dir, [headRef])).get(headRef) : undefined;
    const published = inBase.get(pullRef);
    if (head && branchTip && branchTip !== published) await this.publish(base, head, pull.headBranch, pull.repoIndex, branchTip);
    return branchTip ?? published ?? null;
  }
}
