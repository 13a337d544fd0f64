import { AuditService } from '../audit/audit.service';
import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { AuthContext } from '../auth/auth-context';
import { requireSignedIn } from '../auth/route-auth';
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from '../common/errors';
import { Clock } from '../common/time';
import { isUniqueViolation, Transactions } from '../database/transactions';
import { UserVisibility } from '../users/user-visibility';
import { UserEntity } from '../users/user.entity';
import { UserAccounts } from '../users/user-accounts';
import type { CreateRepositoryOption } from './create-repository.option';
import { GitRepositories, ObjectFormat, RepositoryPathTakenError } from '../git/git-repositories';
import { gitSignature } from './git-signature';
import { RepositoryPaths, repositoryLeaseKey } from '../git/repository-paths';
import { RepositoryJournal } from '../git/repository-journal';
import { QUOTA_GATE, QuotaGate } from './quota-gate';
import { OrganizationPolicy } from '../access/organization-policy';
import { RepositoryPolicy, type RepositoryTarget } from '../access/repository-policy';
import { RepositoryEntity } from './repository.entity';
import { repositoryUrls } from './repository.mapper';
import { assertUsableRepositoryName, DEFAULT_BRANCH } from './repository-names';
import { RepositoryStore } from './repository.store';
import { RepositoryViews } from './repository-views';
import type { RepositoryWire } from './repository.wire';
import { StarStore } from './star.store';
import { RepositoryTemplates } from './templates/repository-templates';
import { WatchStore } from './watch.store';
import { faultPoint } from '../common/fault-points';
import { KeyedLeases, Leases } from '../database/leases';
import { RepositoryEvents } from '../events/repository-events';
import { SiteUrls } from '../common/site-urls';

// One cohesive thing, kept whole though long: a repository's lifecycle (create, adopt, rename, delete), whose
// steps share the path leases, the journal and the compensations that keep row and directory together.

const ALL_PERMISSIONS = { admin: true, push: true, pull: true };

/** The fields of a repository whose directory was filled elsewhere (a migration) before its row exists. */
export interface ImportedRepository {
  name: string;
  description: string;
  isPrivate: boolean;
  isEmpty: boolean;
  isMirror: boolean;
  mirrorInterval: string;
  mirrorUpdatedUnix: number;
  originalUrl: string;
  defaultBranch: string;
  objectFormatName: string;
  gitSize: number;
}

/**
 * Told inside the deletion's transaction that a repository's row goes; what it returns runs after the commit
 * (files on disk), so that a rollback never leaves rows without their files.
 */
export type RepositoryDeletionListener = (tx: EntityManager, repo: RepositoryEntity) => Promise<(() => Promise<void>) | void>;

/** Told inside the creation's transaction that a repository's row was inserted, by whom and for which owner. */
export type RepositoryCreationListener = (tx: EntityManager, repo: RepositoryEntity, owner: UserEntity, creator: AuthContext) => Promise<void>;

/**
 * Repositories' lifecycle: creation (row and bare git directory together, or neither), adoption of a directory
 * filled elsewhere (a migration), the row and directory change of a rename, and deletion, each with its
 * compensating step; and the lookups of GET /repos/{owner}/{repo} and GET /repositories/{id}. What a repository's
 * settings say (PATCH) is RepositorySettings'.
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
  private readonly deletionListeners: RepositoryDeletionListener[] = [];
  private readonly creationListeners: RepositoryCreationListener[] = [];

  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly repositories: RepositoryStore,
    private readonly stars: StarStore,
    private readonly watches: WatchStore,
    private readonly users: UserAccounts,
    private readonly userVisibility: UserVisibility,
    private readonly views: RepositoryViews,
    private readonly policy: RepositoryPolicy,
    private readonly templates: RepositoryTemplates,
    private readonly git: GitRepositories,
    private readonly paths: RepositoryPaths,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    @Inject(QUOTA_GATE) private readonly quota: QuotaGate,
    private readonly events: RepositoryEvents,
    private readonly organizationPolicy: OrganizationPolicy,
    private readonly journal: RepositoryJournal,
    private readonly audit: AuditService,
  ) {}

  /** Modules that keep rows per repository (releases, mirrors) register here to go with it. */
  onRepositoryDeleted(listener: RepositoryDeletionListener): void {
    this.deletionListeners.push(listener);
  }

  /** Modules that keep rows per repository from its creation on (the creator's collaboration) register here. */
  onRepositoryCreated(listener: RepositoryCreationListener): void {
    this.creationListeners.push(listener);
  }

  async onModuleInit(): Promise<void> {
    // Directories parked by a deletion that was interrupted before it could remove them.
    await this.git.emptyTrash();
  }

  async get(target: RepositoryTarget): Promise<RepositoryWire> {
    return this.views.one(target.repo, target.owner, target.viewer, (await target.permission()).toWire());
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

  /** POST /user/repos: quota on the caller, then the shared rules. */
  async createForCaller(viewer: AuthContext, option: CreateRepositoryOption): Promise<RepositoryWire> {
    requireSignedIn(viewer);
    await this.quota.assertCanCreateRepository(viewer.user);
    return this.create(viewer, viewer.user, option);
  }

  /** POST /admin/users/{username}/repos: a site admin creates a repository owned by a user or organisation. */
  async createForOwnerByAdmin(viewer: AuthContext, ownerName: string, option: CreateRepositoryOption): Promise<RepositoryWire> {
    requireSignedIn(viewer);
    const owner = await this.users.byName(ownerName);
    if (!owner) throw new NotFoundError();
    await this.quota.assertCanCreateRepository(owner);
    return this.create(viewer, owner, option);
  }

  /**
   * POST /org/{org}/repos: not an organisation → 422; invisible → 404; quota → 413; not
   * allowed → 403.
   */
  async createInOrganizationDeprecated(viewer: AuthContext, orgName: string, option: CreateRepositoryOption): Promise<RepositoryWire> {
    requireSignedIn(viewer);
    const org = await this.users.byName(orgName);
    if (!org || !org.isOrganization) throw new InvalidInputError(`org does not exist [id: 0, name: ${orgName}]`);
    if (!(await this.userVisibility.canSee(viewer, org))) throw new NotFoundError();
    return this.createInOrganization(viewer, org, option);
  }

  /** POST /orgs/{org}/repos, first step: unknown or not an organisation → 404; then public-only and visibility. */
  async organizationForCreation(viewer: AuthContext, orgName: string): Promise<UserEntity> {
    const org = await this.users.byName(orgName);
    if (!org || !org.isOrganization) throw new NotFoundError();
    await this.userVisibility.assertVisible(viewer, org);
    return org;
  }

  /** Quota on the organisation (413), then a site admin, an owner or a team that may create repositories (403), then the shared rules. */
  async createInOrganization(viewer: AuthContext, org: UserEntity, option: CreateRepositoryOption): Promise<RepositoryWire> {
    requireSignedIn(viewer);
    await this.quota.assertCanCreateRepository(org);
    if (!(await this.organizationPolicy.createsRepositories(viewer, org.id))) {
      throw new ForbiddenError('Given user is not allowed to create repository in organization.');
    }
    return this.create(viewer, org, option);
  }

  /**
   * Behaviour 4.1 after owner, quota and permission: templates (422) → duplicate (409) → reserved name (422)
   * → the bare repository built aside (in the incoming area, measured there) → the row (with the owner's
   * counter, the creator's watch and the measured size) in one transaction, inside which the directory moves
   * into place. A crash at any step leaves either nothing visible or the whole repository; what it leaves
   * aside the start-up reconciliation clears.
   */
  private async create(viewer: AuthContext, owner: UserEntity, option: CreateRepositoryOption): Promise<RepositoryWire> {
    requireSignedIn(viewer);
    const creator = viewer.user;
    const autoInit = option.auto_init === true;
    const templateChoice = { readme: option.readme || 'Default', gitignores: option.gitignores, license: option.license };
    // Templates are used only by the first commit, so they are checked only when there is one (as Forgejo).
    if (autoInit) this.templates.assertKnown(templateChoice);
    if (await this.repositories.findByOwnerAndName(owner.id, option.name)) throw duplicateName();
    assertUsableRepositoryName(option.name);
    const now = this.clock.nowUnix();
    const defaultBranch = option.default_branch || DEFAULT_BRANCH;
    const objectFormat = (option.object_format_name || 'sha1') as ObjectFormat;
    const description = option.description ?? '';
    const aside = await this.git.incomingPath();
    try {
      const planned = Object.assign(new RepositoryEntity(), { name: option.name, description });
      await this.git.create(aside, {
        objectFormat,
        defaultBranch,
        initialCommit: autoInit ? this.initialCommit(creator, owner, planned, templateChoice, now) : undefined,
      });
      const gitSize = await this.git.size(aside);
      faultPoint('repository.create.built');
      const fields: ImportedRepository & { isTemplate: boolean } = {
        name: option.name,
        description,
        originalUrl: '',
        defaultBranch,
        objectFormatName: objectFormat,
        isPrivate: option.private === true,
        isEmpty: !autoInit,
        isTemplate: option.template === true,
        isMirror: false,
        mirrorInterval: '',
        mirrorUpdatedUnix: 0,
        gitSize,
      };
      return await this.createFromDirectory(viewer, owner, fields, aside, async () => undefined);
    } finally {
      // Moved into place on success; otherwise what was built aside goes.
      await this.git.removeAside(aside).catch((error: Error) => this.logger.error(`could not remove ${aside}: ${error.message}`));
    }
  }

  /** The row with the owner's counter and the creator's watch, inside `tx`. */
  private async insertRow(tx: EntityManager, owner: UserEntity, creator: UserEntity, now: number, fields: Partial<RepositoryEntity> & { name: string }): Promise<RepositoryEntity> {
    if (await this.repositories.findByOwnerAndName(owner.id, fields.name, tx)) throw duplicateName();
    const row = await this.repositories.insert(tx, {
      website: '',
      isTemplate: false,
      ...fields,
      ownerId: owner.id,
      lowerName: fields.name.toLowerCase(),
      numStars: 0,
      numWatches: 1,
      createdUnix: now,
      updatedUnix: now,
    });
    await this.users.addToCounter(tx, owner.id, 'numRepos', 1);
    await this.watches.insert(tx, creator.id, row.id, now);
    return row;
  }

  /** The duplicate (409) and reserved-name (422) checks of every creation, for a creation that does work first. */
  async assertNameAvailable(owner: UserEntity, name: string): Promise<void> {
    if (await this.repositories.findByOwnerAndName(owner.id, name)) throw duplicateName();
    assertUsableRepositoryName(name);
  }

  /**
   * Creates a repository whose directory was prepared at `sourceDir` (a migration's clone): the row, the
   * owner's counter, the creator's watch and `withRow` (the mirror record) in one transaction, and inside it the
   * move of the directory into place, so that the repository becomes visible with its files or not at all. A
   * name taken meanwhile is a 409, and `sourceDir` is then left for the caller to delete.
   */
  async createFromDirectory(
    viewer: AuthContext,
    owner: UserEntity,
    fields: ImportedRepository,
    sourceDir: string,
    withRow: (tx: EntityManager, row: RepositoryEntity) => Promise<void>,
  ): Promise<RepositoryWire> {
    requireSignedIn(viewer);
    const dir = this.paths.repository(owner.name, fields.name);
    const now = this.clock.nowUnix();
    let moved = false;
    let repo: RepositoryEntity;
    // Journalled: should the process die between the move and the commit, the start-up reconciliation finds
    // the directory without its row at once (repository-journal.ts).
    const settled = await this.journal.begin({ kind: 'create', to: dir });
    try {
      // Under the path's lock, as creation: a deletion of the same path cannot run between row and directory.
      repo = await this.pathLocks.run(pathKey(dir), () =>
        this.transactions.run(async (tx) => {
          // A retried transaction (a MySQL deadlock) starts again from the directory aside.
          if (moved) await this.git.adopt(dir, sourceDir);
          moved = false;
          const row = await this.insertRow(tx, owner, viewer.user, now, { ...fields });
          await withRow(tx, row);
          for (const listener of this.creationListeners) await listener(tx, row, owner, viewer);
          await this.events.record(tx, { kind: 'repository', action: 'created', repo: row, senderId: viewer.user.id });
          await this.audit.record(tx, {
            action: 'repository.create',
            target: { type: 'repository', id: row.id, name: `${owner.name}/${row.name}` },
            detail: { visibility: row.isPrivate ? 'private' : 'public', mirror: row.isMirror },
          });
          await this.git.adopt(sourceDir, dir);
          moved = true;
          faultPoint('repository.create.moved');
          return row;
        }),
      );
      faultPoint('repository.create.committed');
      this.events.committed();
    } catch (error) {
      // The commit failed after the move: the directory goes back to the caller's temporary place.
      if (moved) await this.git.remove(dir).catch(() => undefined);
      await settled().catch(() => undefined);
      if (isUniqueViolation(error)) throw duplicateName();
      throw error;
    }
    await settled().catch((error: Error) => this.logger.warn(`created ${owner.name}/${fields.name}, but its journal entry stayed: ${error.message}`));
    const stored = (await this.repositories.findById(repo.id))!;
    return this.views.one(stored, owner, viewer, ALL_PERMISSIONS);
  }

  /**
   * Measures a repository's directory and stores the size quota usage counts (docs/quota.md). Whatever
   * changes a repository on disk (push, migration, mirror sync) calls this afterwards.
   */
  async refreshGitSize(ownerName: string, repo: { id: number; name: string }): Promise<number> {
    const bytes = await this.git.size(this.paths.repository(ownerName, repo.name));
    await this.repositories.recordGitSize(repo.id, bytes);
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
          if (error instanceof RepositoryPathTakenError) throw new ConflictError('The repository files already exist. Please contact the system administrator.');
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
   * DELETE /repos/{owner}/{repo}: the owner's mode (owner, Owners or admin team, site admin; not an admin
   * collaborator, as Forgejo). The row goes first (the commit point), then
   * the directory; if the process dies between the two, the next creation at that path clears the leftover.
   */
  async delete(target: RepositoryTarget): Promise<void> {
    const { repo, owner } = target;
    await target.assertOwner('user should be the owner of the repo');
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
          const steps = await this.deleteRow(tx, repo);
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

  /** The row, its stars (with the starrers' counters), its watches and the owner's counter, in one transaction. */
  private async deleteRow(tx: EntityManager, repo: RepositoryEntity): Promise<(() => Promise<void>)[]> {
    if (!(await this.repositories.delete(tx, repo.id))) throw new NotFoundError();
    await this.stars.deleteAllOfRepository(tx, repo.id);
    await this.watches.deleteAllOfRepository(tx, repo.id);
    await this.users.addToCounter(tx, repo.ownerId, 'numRepos', -1);
    const afterCommit: (() => Promise<void>)[] = [];
    for (const listener of this.deletionListeners) {
      const step = await listener(tx, repo);
      if (step) afterCommit.push(step);
    }
    return afterCommit;
  }

  private initialCommit(
    creator: UserEntity,
    owner: UserEntity,
    repo: RepositoryEntity,
    choice: { readme: string; gitignores?: string; license?: string },
    now: number,
  ) {
    const site = this.siteUrls;
    const author = gitSignature(creator, site, now);
    const urls = repositoryUrls(owner, repo, site);
    const files = this.templates.render(choice, {
      readme: { Name: repo.name, Description: repo.description, OwnerName: owner.name, 'CloneURL.HTTPS': urls.clone, 'CloneURL.SSH': urls.ssh },
      license: { owner: owner.name, email: author.email, repository: repo.name, year: String(new Date(now * 1000).getUTCFullYear()) },
    });
    return { message: 'Initial commit', author, files };
  }
}

export function duplicateName(): ConflictError {
  return new ConflictError('The repository with the same name already exists.');
}

/** A repository directory's lease key: `owner/name.git`, the same on every instance whatever DATA_DIR's mount. */
function pathKey(dir: string): string {
  return repositoryLeaseKey(dir);
}
