import { AuditService } from '../audit/audit.service';
import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { AuthContext } from '../auth/auth-context';
import { ConflictError, NotFoundError } from '../common/errors';
import { Clock } from '../common/time';
import { isUniqueViolation, Transactions } from '../database/transactions';
import { UserEntity } from '../users/user.entity';
import { UserAccounts } from '../users/user-accounts';
import { GitRepositories, RepositoryPathTakenError } from '../git/git-repositories';
import { RepositoryPaths, repositoryLeaseKey } from '../git/repository-paths';
import { RepositoryJournal } from '../git/repository-journal';
import { RepositoryPolicy, type RepositoryTarget } from '../access/repository-policy';
import { permissionsOnWire } from '../access/repository-viewer-rules';
import { RepositoryEntity } from './repository.entity';
import { RepositoryStore } from './repository.store';
import { RepositoryViews } from './repository-views';
import type { RepositoryWire } from './repository.wire';
import { StarStore } from './star.store';
import { WatchStore } from './watch.store';
import { faultPoint } from '../common/fault-points';
import { KeyedLeases, Leases } from '../database/leases';
import { AfterCommit, LifecycleEvents } from '../events/lifecycle-events';
import { RepositoryEvents } from '../events/repository-events';

/**
 * Repositories after their creation: the row and directory change of a rename, and deletion, each with its
 * compensating step; and the lookups of GET /repos/{owner}/{repo} and GET /repositories/{id}. Creation and
 * adoption are RepositoryCreation's (repository-creation.service.ts); what a repository's settings say (PATCH)
 * is RepositorySettings'.
 */
@Injectable()
export class RepositoriesService implements OnModuleInit {
  private readonly logger = new Logger('RepositoriesService');
  /**
   * Per repository path, across every instance on this database: creation, rename and deletion each change a
   * row and a directory as one step.
   */
  @Inject(Leases) private readonly leases!: Leases;
  private pathLeases?: KeyedLeases;
  private get pathLocks(): KeyedLeases {
    return (this.pathLeases ??= this.leases.keyed('repository-path'));
  }

  constructor(
    private readonly repositories: RepositoryStore,
    private readonly stars: StarStore,
    private readonly watches: WatchStore,
    private readonly users: UserAccounts,
    private readonly views: RepositoryViews,
    private readonly policy: RepositoryPolicy,
    private readonly git: GitRepositories,
    private readonly paths: RepositoryPaths,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly events: RepositoryEvents,
    private readonly journal: RepositoryJournal,
    private readonly audit: AuditService,
    private readonly bus: LifecycleEvents,
  ) {}

  async onModuleInit(): Promise<void> {
    // Directories parked by a deletion that was interrupted before it could remove them.
    await this.git.emptyTrash();
  }

  async get(target: RepositoryTarget): Promise<RepositoryWire> {
    return this.views.one(target.repo, target.owner, target.viewer, await permissionsOnWire(target));
  }

  /** GET /repositories/{id}: the answer of GET /repos/{owner}/{repo}, found by id; 404 for a bad or unseen id. */
  async getById(viewer: AuthContext, id: string): Promise<RepositoryWire> {
    const number = /^\d{1,15}$/.test(id) ? Number(id) : 0;
    if (number <= 0) throw new NotFoundError();
    const repo = await this.repositories.findById(number);
    const owner = repo ? await this.users.byId(repo.ownerId) : null;
    if (!repo || !owner) throw new NotFoundError();
    return this.get(await this.policy.open(viewer, repo, owner));
  }

  /**
   * Measures a repository's directory and stores the size quota usage counts (docs/quota.md). Whatever
   * changes a repository on disk (push, migration, mirror sync) calls this afterwards.
   */
  async refreshGitSize(ownerName: string, repo: { id: number; name: string }): Promise<number> {
    const ticket = await this.transactions.run((tx) => this.repositories.beginSizeMeasurement(tx, repo.id));
    const bytes = await this.git.size(this.paths.repository(ownerName, repo.name));
    if (ticket !== undefined) await this.transactions.run((tx) => this.repositories.storeMeasuredSize(tx, repo.id, bytes, ticket));
    return bytes;
  }

  /**
   * Writes a repository's changed row, for its settings. With `moveTo` (a new name beyond letter case) the
   * directory moves first and moves back when the row cannot change, so row and directory stay together; `undo`
   * reverts what the caller changed on disk before (the HEAD) when either step fails. Stars and watches hang on
   * the repository id and are kept.
   */
  async updateRow(
    target: RepositoryTarget,
    changes: Partial<RepositoryEntity>,
    step: { moveTo?: string; apply?: (tx: EntityManager) => Promise<void>; undo: () => Promise<void> | void },
  ): Promise<void> {
    const { repo, owner } = target;
    const dir = this.paths.repository(owner.name, repo.name);
    const moves = step.moveTo !== undefined;
    const newName = step.moveTo;
    const undoHead = step.undo;
    const newDir = moves ? this.paths.repository(owner.name, newName!) : dir;
    // A move holds both paths, as creation and deletion hold theirs: no other instance creates at the new path
    // or deletes at the old one between the move and the row's change.
    await this.pathLocks.runAll(moves ? [pathKey(dir), pathKey(newDir)] : [], async () => {
      // A move is journalled first: should the process die before the row and the directory agree again, the
      // start-up reconciliation completes the rename or moves the directory back (repository-journal.ts).
      let settled: (() => Promise<void>) | undefined;
      if (moves) {
        try {
          settled = await this.journal.begin({ kind: 'rename', repoId: repo.id, from: dir, to: newDir });
          await this.git.move(dir, newDir);
        } catch (error) {
          await settled?.();
          await undoHead();
          // As Forgejo's ErrRepoFilesAlreadyExist: files without a row at the target path are the admin's to clear.
          if (error instanceof RepositoryPathTakenError)
            throw new ConflictError('The repository files already exist. Please contact the system administrator.');
          throw error;
        }
        faultPoint('repository.rename.moved');
      }
      changes.updatedUnix = this.clock.nowUnix();
      try {
        await this.transactions.run(async (tx) => {
          if (moves && (await this.repositories.findByOwnerAndName(owner.id, newName!, tx))) throw duplicateName();
          await this.repositories.update(tx, repo.id, changes);
          await step.apply?.(tx);
          await this.recordEdit(tx, owner, repo, changes);
        });
      } catch (error) {
        if (moves) {
          const undone = await this.git.move(newDir, dir).then(
            () => true,
            (undo: Error) => {
              this.logger.error(`renaming ${owner.name}/${repo.name} failed and its directory could not move back: ${undo.message}`);
              return false;
            },
          );
          // Kept when the directory could not move back: the next start's reconciliation moves it.
          if (undone) await settled?.();
        }
        await undoHead();
        if (isUniqueViolation(error)) throw duplicateName();
        throw error;
      }
      if (moves) faultPoint('repository.rename.committed');
      await settled?.().catch((error: Error) => this.logger.warn(`renamed ${owner.name}/${repo.name}, but its journal entry stayed: ${error.message}`));
    });
  }

  /**
   * DELETE /repos/{owner}/{repo}, whose route admits the owner's mode (owner, Owners or admin team, site admin; not an admin
   * collaborator, as Forgejo). The row goes first (the commit point), then
   * the directory; if the process dies between the two, the next creation at that path clears the leftover.
   */
  async delete(target: RepositoryTarget): Promise<void> {
    const { repo, owner } = target;
    const dir = this.paths.repository(owner.name, repo.name);
    // Row and directory go under the path's lock: a creation at the same path waits until both are gone,
    // rather than having its new directory removed by this deletion.
    await this.pathLocks.run(pathKey(dir), async () => {
      // Journalled: should the process die between the commit and the removal, the start-up reconciliation
      // finds the directory without its row at once (repository-journal.ts).
      const settled = await this.journal.begin({ kind: 'delete', to: dir });
      let afterCommit: (() => Promise<void>)[];
      try {
        afterCommit = await this.transactions.run(async (tx) => {
          const steps = await this.deleteRow(tx, repo, target.viewer.user!.id);
          await this.events.record(tx, { kind: 'repository', action: 'deleted', repo, senderId: target.viewer.user!.id });
          await this.audit.record(tx, { action: 'repository.delete', target: { type: 'repository', id: repo.id, name: `${owner.name}/${repo.name}` } });
          return steps;
        });
      } catch (error) {
        await settled().catch(() => undefined);
        throw error;
      }
      faultPoint('repository.delete.committed');
      this.events.committed();
      try {
        await this.git.remove(dir);
        await settled();
      } catch (error) {
        this.logger.error(`repository ${owner.name}/${repo.name} deleted, but its directory stayed: ${(error as Error).message}`);
      }
      for (const step of afterCommit) await step().catch((error: Error) => this.logger.error(`after deleting ${owner.name}/${repo.name}: ${error.message}`));
    });
  }

  /** The security-relevant parts of an edit, one audit event each: rename, visibility, archiving. */
  private async recordEdit(tx: EntityManager, owner: UserEntity, repo: RepositoryEntity, changes: Partial<RepositoryEntity>): Promise<void> {
    const target = { type: 'repository' as const, id: repo.id, name: `${owner.name}/${changes.name ?? repo.name}` };
    if (changes.name !== undefined && changes.name !== repo.name) {
      await this.audit.record(tx, { action: 'repository.rename', target, detail: { from: `${owner.name}/${repo.name}` } });
    }
    if (changes.isPrivate !== undefined && changes.isPrivate !== repo.isPrivate) {
      await this.audit.record(tx, { action: 'repository.visibility', target, detail: { visibility: changes.isPrivate ? 'private' : 'public' } });
    }
    if (changes.isArchived !== undefined) {
      await this.audit.record(tx, { action: changes.isArchived ? 'repository.archive' : 'repository.unarchive', target });
    }
  }

  /**
   * The row, its stars (with the starrers' counters), its watches and the owner's counter, then what other
   * modules keep per repository (the `repository.deleted` subscribers), in one transaction. What they answer
   * runs after the commit (files on disk), so that a rollback never leaves rows without their files. `doerId`:
   * who deletes it (0 when nobody signed in does, a server task).
   */
  private async deleteRow(tx: EntityManager, repo: RepositoryEntity, doerId: number): Promise<AfterCommit[]> {
    if (!(await this.repositories.delete(tx, repo.id))) throw new NotFoundError();
    await this.stars.deleteAllOfRepository(tx, repo.id);
    await this.watches.deleteAllOfRepository(tx, repo.id);
    await this.users.addToCounter(tx, repo.ownerId, 'numRepos', -1);
    const afterCommit: AfterCommit[] = [];
    for (const step of await this.bus.emit('repository.deleted', { tx, repo, doerId })) if (step) afterCommit.push(step);
    return afterCommit;
  }
}

export function duplicateName(): ConflictError {
  return new ConflictError('The repository with the same name already exists.');
}

/** A repository directory's lease key: `owner/name.git`, the same on every instance whatever DATA_DIR's mount. */
export function pathKey(dir: string): string {
  return repositoryLeaseKey(dir);
}
