import { Inject, Injectable, Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { BranchProtections } from '../access/branch-protection-policy';
import { OrganizationPolicy } from '../access/organization-policy';
import { RepositoryTarget } from '../access/repository-policy';
import { BadRequestError, ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { KeyedLeases, Leases } from '../database/leases';
import type { AfterCommit, RepositoryDeleted } from '../events/lifecycle-events';
import { GitChanges } from '../git/git-changes';
import { GitPools } from '../git/git-pools';
import { GitRefs } from '../git/git-refs';
import { GitRepositories, ObjectFormat } from '../git/git-repositories';
import { RepositoryPaths } from '../git/repository-paths';
import { UserAccounts } from '../users/user-accounts';
import { UserEntity, Visibility } from '../users/user.entity';
import type { CreateForkOption } from './create-fork.option';
import { QUOTA_GATE, QuotaGate } from '../quota/quota-gate';
import { duplicateName } from './repositories.service';
import { RepositoryAccess, visibilityScope } from './repository-access';
import { RepositoryCreation } from './repository-creation.service';
import { RepositoryPushes } from './repository-pushes.service';
import { RepositoryEntity } from './repository.entity';
import { assertUsableRepositoryName } from './repository-names';
import { RepositoryStore } from './repository.store';
import { RepositoryViews } from './repository-views';
import type { RepositoryWire, SyncForkInfoWire } from './repository.wire';

/** What another module adds to a fork as it is made (LFS objects): a check first, then rows in its transaction. */
export interface ForkParticipant {
  /** Before anything is made; may refuse the fork (a domain error). */
  check(forker: { id: number; name: string }, source: RepositoryEntity): Promise<void>;
  /** Inside the transaction that inserts the fork's row; may update `fork` to what the transaction stores. */
  link(tx: EntityManager, source: RepositoryEntity, fork: RepositoryEntity): Promise<void>;
}

/**
 * Forks (docs/forks.md): making one (refs written into a new member of the source's object pool), listing a
 * repository's direct forks, bringing a fork's branch up to its source's by fast-forward, and what a deletion does
 * to a fork network (forks of a deleted source are detached; the pool goes with its last member).
 */
@Injectable()
export class ForksService {
  private readonly logger = new Logger('ForksService');
  @Inject(Leases) private readonly leases!: Leases;
  private poolLeases?: KeyedLeases;
  private readonly participants: ForkParticipant[] = [];
  /** Per pool, across every instance: a fork made into a pool and the removal of that pool never overlap. */
  private get poolLocks(): KeyedLeases {
    return (this.poolLeases ??= this.leases.keyed('repository-pool'));
  }

  constructor(
    private readonly repositories: RepositoryStore,
    private readonly creation: RepositoryCreation,
    private readonly users: UserAccounts,
    private readonly organizationPolicy: OrganizationPolicy,
    private readonly pools: GitPools,
    private readonly git: GitRepositories,
    private readonly refs: GitRefs,
    private readonly paths: RepositoryPaths,
    private readonly views: RepositoryViews,
    private readonly access: RepositoryAccess,
    @Inject(QUOTA_GATE) private readonly quota: QuotaGate,
    private readonly protections: BranchProtections,
    private readonly changes: GitChanges,
    private readonly pushes: RepositoryPushes,
  ) {}

  /** Registers what another module adds to every fork (registered once, at start-up). */
  onFork(participant: ForkParticipant): void {
    this.participants.push(participant);
  }

  /**
   * POST /repos/{owner}/{repo}/forks, after the route's read check on the code: sign-in (401), the organisation
   * (422 unknown, 403 not a member or may not create), quota (413), one fork per owner and source (409), the
   * name (422 reserved, 409 taken), then the fork.
   */
  /** POST …/forks: the route admitted signed-in readers of the code. */
  async fork(target: RepositoryTarget, option: CreateForkOption): Promise<RepositoryWire> {
    const viewer = target.viewer;
    const source = target.repo;
    let forker: UserEntity = viewer.user!;
    if (option.organization !== undefined && option.organization !== null) {
      const org = await this.users.byName(option.organization);
      if (!org || !org.isOrganization) throw new InvalidInputError(`org does not exist [id: 0, name: ${option.organization}]`);
      if (!(await this.organizationPolicy.isMember(viewer, org.id))) throw new ForbiddenError(`User is no Member of Organisation '${org.name}'`);
      if (!(await this.organizationPolicy.createsRepositories(viewer, org.id))) {
        throw new ForbiddenError('Given user is not allowed to create repository in organization.');
      }
      forker = org;
    }
    await this.quota.assertCanWrite({ id: forker.id, name: forker.name }, 'size:repos:all');
    for (const participant of this.participants) await participant.check({ id: forker.id, name: forker.name }, source);
    const name = option.name || source.name;
    await this.assertNoFork(forker, target);
    assertUsableRepositoryName(name);
    if (await this.repositories.findByOwnerAndName(forker.id, name)) throw duplicateName();

    const sourceDir = this.paths.repository(target.owner.name, source.name);
    const poolName = await this.poolOf(source, sourceDir);
    try {
      return await this.poolLocks.run(poolName, async () => {
        await this.pools.refresh(poolName, source.id, sourceDir);
        const refs = (await this.pools.memberRefs(poolName, source.id)).filter(({ ref }) => ref.startsWith('refs/heads/') || ref.startsWith('refs/tags/'));
        const aside = await this.git.incomingPath();
        try {
          await this.pools.buildMember(aside, poolName, { objectFormat: source.objectFormatName as ObjectFormat, defaultBranch: source.defaultBranch, refs });
          // What a new fork would cost alone is what its source does (the same branches and tags; docs/quota.md):
          // the source's measured size, until the fork's first push measures its own. Measuring it now would walk
          // every object a large history reaches: seconds per fork (bench/forks.bench.js).
          const gitSize = (await this.repositories.findById(source.id))?.gitSize ?? source.gitSize;
          return await this.creation.createFromDirectory(
            viewer,
            forker,
            {
              name,
              description: source.description,
              // A fork of a private source, or of a private owner's, is private (as Forgejo).
              isPrivate: source.isPrivate || target.owner.visibility === Visibility.Private,
              isEmpty: source.isEmpty,
              isMirror: false,
              mirrorInterval: '',
              mirrorUpdatedUnix: 0,
              originalUrl: '',
              defaultBranch: source.defaultBranch,
              objectFormatName: source.objectFormatName,
              gitSize,
              isFork: true,
              forkId: source.id,
              objectPool: poolName,
            },
            aside,
            async (tx, row) => {
              // The source may have been deleted meanwhile: then there is nothing to fork.
              if (!(await this.repositories.addToForkCount(tx, source.id, 1))) throw new NotFoundError();
              await this.repositories.claimFork(tx, forker.id, source.id, row.id);
              for (const participant of this.participants) await participant.link(tx, source, row);
            },
          );
        } finally {
          await this.git.removeAside(aside).catch((error: Error) => this.logger.error(`could not remove ${aside}: ${error.message}`));
        }
      });
    } catch (error) {
      // Two forks of one source by one owner at once: the unique index let one through.
      if (error instanceof ConflictError) await this.assertNoFork(forker, target);
      throw error;
    }
  }

  /** GET /repos/{owner}/{repo}/forks: the direct forks the caller may see, oldest first. */
  async list(target: RepositoryTarget, page: PageQuery): Promise<Page<RepositoryWire>> {
    const access = await this.access.of(target.viewer);
    return this.views.page(await this.repositories.listForks(target.repo.id, visibilityScope(access), page), target.viewer, access);
  }

  /**
   * GET /repos/{owner}/{repo}/sync_fork[/{branch}]: where the fork's branch stands to the source's branch of the
   * same name. `allowed` says whether a sync would succeed: a fork that still has its source, the branch on both
   * sides, different commits, and the fork's an ancestor of the source's (syncing only fast-forwards).
   */
  async syncInfo(target: RepositoryTarget, branchName?: string): Promise<SyncForkInfoWire> {
    const state = await this.syncState(target, branchName);
    return { allowed: state.allowed, fork_commit: state.forkCommit, base_commit: state.baseCommit, commits_behind: state.behind };
  }

  /**
   * POST /repos/{owner}/{repo}/sync_fork[/{branch}], whose route admits writers of the fork's code (403; archived 423): the
   * fork's branch moves to the source's commit when that is a fast-forward (400 otherwise). The source's objects
   * reach the fork through the pool, refreshed first.
   */
  async sync(target: RepositoryTarget, branchName?: string): Promise<void> {
    const state = await this.syncState(target, branchName);
    if (!state.source) throw new BadRequestError('repository is not a fork');
    if (!state.forkCommit) throw new NotFoundError('branch does not exist');
    if (!state.baseCommit) throw new BadRequestError('the branch does not exist in the base repository');
    if (state.forkCommit === state.baseCommit) return;
    if (!state.fastForward) throw new BadRequestError('the branch has diverged from the base repository: it can only be synced by a fast-forward');
    await this.quota.assertCanWrite({ id: target.owner.id, name: target.owner.name }, 'size:repos:all');
    const { repo, owner } = target;
    const forkDir = this.paths.repository(owner.name, repo.name);
    const poolName = await this.poolOf(state.source.repo, state.source.dir);
    await this.poolLocks.run(poolName, async () => {
      await this.pools.refresh(poolName, state.source!.repo.id, state.source!.dir);
      // The fork's branch moves as a push of the caller would move it: its protection judges the change.
      await this.protections.assertAllowed(repo.id, {
        door: 'git',
        branch: state.branch,
        pusher: this.protections.callerPusher(target),
        facts: this.changes.reading(forkDir, state.forkCommit, state.baseCommit),
      });
      if (!(await this.pools.moveBranch(forkDir, state.branch, state.baseCommit, state.forkCommit))) {
        throw new ConflictError('the branch changed while it was being synced');
      }
    });
    // Then what a push records: size, update time, the push's events and webhooks, in one transaction.
    await this.pushes.recordRefChanges(
      repo.id,
      [{ ref: `refs/heads/${state.branch}`, oldId: state.forkCommit, newId: state.baseCommit }],
      target.viewer.user?.id ?? 0,
    );
  }

  private async syncState(target: RepositoryTarget, branchName?: string) {
    const { repo, owner } = target;
    const branch = branchName ?? repo.defaultBranch;
    const forkDir = this.paths.repository(owner.name, repo.name);
    const forkCommit = (await this.refs.resolveCommit(forkDir, `refs/heads/${branch}`)) ?? '';
    const empty = {
      allowed: false,
      forkCommit,
      baseCommit: '',
      behind: 0,
      fastForward: false,
      branch,
      source: null as null | { repo: RepositoryEntity; dir: string },
    };
    if (!repo.isFork || !repo.forkId || repo.isArchived) return empty;
    const sourceRepo = await this.repositories.findById(repo.forkId);
    const sourceOwner = sourceRepo ? await this.users.byId(sourceRepo.ownerId) : null;
    if (!sourceRepo || !sourceOwner) return empty;
    const source = { repo: sourceRepo, dir: this.paths.repository(sourceOwner.name, sourceRepo.name) };
    const baseCommit = (await this.refs.resolveCommit(source.dir, `refs/heads/${branch}`)) ?? '';
    if (!forkCommit || !baseCommit || forkCommit === baseCommit) return { ...empty, baseCommit, source };
    const compared = await this.pools.compare(source.dir, forkDir, forkCommit, baseCommit);
    return { allowed: compared.fastForward, forkCommit, baseCommit, behind: compared.behind, fastForward: compared.fastForward, branch, source };
  }

  private async assertNoFork(forker: UserEntity, target: RepositoryTarget): Promise<void> {
    const existing = await this.repositories.findForkOf(forker.id, target.repo.id);
    if (existing) {
      throw new ConflictError(
        `repository is already forked by user [uname: ${forker.name}, repo path: ${target.owner.name}/${target.repo.name}, fork path: ${forker.name}/${existing.name}]`,
      );
    }
  }

  /**
   * The source's pool, made on its first fork: its objects hard-linked into a new pool, recorded on its row
   * (the first of two concurrent first forks wins; the other's pool goes), then the source points at it.
   */
  private async poolOf(source: RepositoryEntity, sourceDir: string): Promise<string> {
    let poolName = source.objectPool || (await this.repositories.findById(source.id))?.objectPool || '';
    if (!poolName) {
      const built = await this.pools.create(sourceDir, source.objectFormatName as ObjectFormat, source.id);
      if (await this.repositories.claimObjectPool(source.id, built)) {
        poolName = built;
      } else {
        await this.pools.remove(built);
        poolName = (await this.repositories.findById(source.id))?.objectPool ?? '';
        if (!poolName) throw new NotFoundError();
      }
    }
    if ((await this.pools.poolOf(sourceDir)) !== poolName) await this.pools.join(sourceDir, poolName);
    return poolName;
  }

  /**
   * In the deletion's transaction: a deleted source's forks are detached, a deleted fork leaves its source's
   * count. After the commit: the member's refs leave the pool, and the pool goes with its last member.
   */
  async repositoryDeleted({ tx, repo }: RepositoryDeleted): Promise<AfterCommit | void> {
    await this.repositories.detachForks(tx, repo.id);
    if (repo.isFork && repo.forkId) await this.repositories.addToForkCount(tx, repo.forkId, -1);
    await this.repositories.forgetFork(tx, repo.id);
    const poolName = repo.objectPool;
    if (!poolName) return;
    return () =>
      this.poolLocks.run(poolName, async () => {
        if ((await this.repositories.countPoolMembers(poolName)) === 0) await this.pools.remove(poolName);
        else await this.pools.forgetMember(poolName, repo.id);
      });
  }
}
