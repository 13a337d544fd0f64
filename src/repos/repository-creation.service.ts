import { Inject, Injectable, Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import type { AuthContext } from '../auth/auth-context';
import { requireSignedIn } from '../auth/route-auth';
import { ForbiddenError, InvalidInputError, NotFoundError } from '../common/errors';
import { faultPoint } from '../common/fault-points';
import { SiteUrls } from '../common/site-urls';
import { Clock } from '../common/time';
import { KeyedLeases, Leases } from '../database/leases';
import { isUniqueViolation, Transactions } from '../database/transactions';
import { LifecycleEvents } from '../events/lifecycle-events';
import { RepositoryEvents } from '../events/repository-events';
import { GitRepositories, ObjectFormat } from '../git/git-repositories';
import { RepositoryJournal } from '../git/repository-journal';
import { RepositoryPaths } from '../git/repository-paths';
import { OrganizationPolicy } from '../access/organization-policy';
import { UserAccounts } from '../users/user-accounts';
import { UserEntity } from '../users/user.entity';
import { UserVisibility } from '../users/user-visibility';
import type { CreateRepositoryOption } from './create-repository.option';
import { gitSignature } from './git-signature';
import { QUOTA_GATE, QuotaGate } from '../quota/quota-gate';
import { duplicateName, pathKey } from './repositories.service';
import { RepositoryEntity } from './repository.entity';
import { repositoryUrls } from './repository.mapper';
import { assertUsableRepositoryName, DEFAULT_BRANCH } from './repository-names';
import { RepositoryStore } from './repository.store';
import { RepositoryViews } from './repository-views';
import type { RepositoryWire } from './repository.wire';
import { RepositoryTemplates } from './templates/repository-templates';
import { WatchStore } from './watch.store';

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
  /** A fork: its source and the fork network's object pool (docs/forks.md). */
  isFork?: boolean;
  forkId?: number;
  objectPool?: string;
}

/**
 * A repository's creation: the checks of each door (POST /user/repos, /orgs/{org}/repos, /org/{org}/repos,
 * /admin/users/{username}/repos), then the row and the bare git directory together or neither; and the adoption
 * of a directory filled elsewhere (a migration's clone). Under the same path leases and journal as rename and
 * deletion (RepositoriesService), so that row and directory stay together on every instance.
 */
@Injectable()
export class RepositoryCreation {
  private readonly logger = new Logger('RepositoryCreation');
  @Inject(Leases) private readonly leases!: Leases;
  private pathLeases?: KeyedLeases;
  private get pathLocks(): KeyedLeases {
    return (this.pathLeases ??= this.leases.keyed('repository-path'));
  }

  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly repositories: RepositoryStore,
    private readonly watches: WatchStore,
    private readonly users: UserAccounts,
    private readonly userVisibility: UserVisibility,
    private readonly views: RepositoryViews,
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
    private readonly bus: LifecycleEvents,
  ) {}

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
   * The order of creation's checks after owner, quota and permission: templates (422) → duplicate (409) → reserved name (422)
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
  private async insertRow(
    tx: EntityManager,
    owner: UserEntity,
    creator: UserEntity,
    now: number,
    fields: Partial<RepositoryEntity> & { name: string },
  ): Promise<RepositoryEntity> {
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
          await this.bus.emit('repository.created', { tx, repo: row, owner, creator: viewer });
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
