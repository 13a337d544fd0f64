import * as fs from 'node:fs/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { requireSignedIn } from '../auth/route-auth';
import { Claim, Claims, ClaimWaitEnded } from '../claims/claims';
import { ServiceUnavailableError } from '../common/dependency-errors';
import { ForbiddenError, InvalidInputError, QuotaExceededError } from '../common/errors';
import { Clock } from '../common/time';
import { MirrorConfig } from '../config/slices';
import { GitAbortedError, GitError, GitTimeoutError, GitUnavailableError } from '../git/git-command';
import { RemoteCredentials, GitRemotes, RemoteTooLargeError } from '../git/git-remotes';
import { GitRepositories } from '../git/git-repositories';
import { QUOTA_GATE, QuotaGate, QuotaReservation } from '../quota/quota-gate';
import { RepositoryCreation } from '../repos/repository-creation.service';
import { DEFAULT_BRANCH } from '../repos/repository-names';
import type { RepositoryWire } from '../repos/repository.wire';
import { OrganizationPolicy } from '../access/organization-policy';
import { UserEntity } from '../users/user.entity';
import { UserAccounts } from '../users/user-accounts';
import { faultPoint } from '../common/fault-points';
import { parseCloneAddress, sanitizeCredentialUrls } from './clone-address';
import { LfsFetch, LfsFetched, lfsEndpointOf } from './lfs-fetch';
import { HostPolicy } from '../outbound/host-policy';
import type { MigrateRepositoryOption } from './migrate-repository.option';
import { MirrorCredentials } from './mirror-credentials';
import { parseMirrorInterval } from './mirror-interval';
import { MirrorStore } from './mirror.store';

/**
 * POST /repos/migrate (docs/mirrors.md): the checks in their order, a clone into a
 * temporary directory, then the row and the directory together (the repository is invisible until then).
 */
@Injectable()
export class MigrationsService {
  private readonly logger = new Logger('MigrationsService');

  constructor(
    private readonly mirrorConfig: MirrorConfig,
    @Inject(QUOTA_GATE) private readonly quota: QuotaGate,
    private readonly users: UserAccounts,
    private readonly organizationPolicy: OrganizationPolicy,
    private readonly creation: RepositoryCreation,
    private readonly policy: HostPolicy,
    private readonly remotes: GitRemotes,
    private readonly lfs: LfsFetch,
    private readonly gitRepositories: GitRepositories,
    private readonly credentials: MirrorCredentials,
    private readonly mirrors: MirrorStore,
    private readonly clock: Clock,
    private readonly claims: Claims,
  ) {}

  /**
   * `clientGone` fires when the caller disconnects: a migration waiting for its turn stops waiting, a running
   * clone is stopped, and nothing is created.
   */
  async migrate(viewer: AuthContext, option: MigrateRepositoryOption, clientGone?: AbortSignal): Promise<RepositoryWire> {
    requireSignedIn(viewer);
    // A body rule: checked before every handler check, and only for a mirror.
    const interval = option.mirror === true ? parseMirrorInterval(option.mirror_interval) : null;
    const owner = await this.owner(viewer, option);
    await this.quota.assertCanCreateRepository(owner);
    await this.assertMayCreateIn(viewer, owner);
    const url = parseCloneAddress(option.clone_addr);
    const source = await this.policy.vet(url);
    await this.creation.assertNameAvailable(owner, option.repo_name);

    const slot = await this.admit(viewer, owner, interval !== null, clientGone);
    try {
      // The clone's byte budget is what the owner has left of `size:repos:all`, reserved before it starts and
      // settled in the transaction that creates the repository.
      const reservation = await this.quota.reserve(owner, 'size:repos:all', option.private === true ? 'reposPrivate' : 'reposPublic', 'remaining');
      try {
        return await this.cloneAndCreate(viewer, owner, option, interval, url, source, reservation, clientGone);
      } finally {
        await reservation.release();
      }
    } finally {
      await slot.release();
    }
  }

  /**
   * Waits for a turn among the migrations of every instance (MIGRATION_MAX_CONCURRENCY in all,
   * MIGRATION_MAX_PER_USER per requester), for at most MIGRATION_QUEUE_TIMEOUT (then 503); a new pull mirror
   * also needs the owner below MIRROR_MAX_PER_USER, counting mirrors being migrated (403 otherwise).
   */
  private async admit(viewer: AuthContext & { user: UserEntity }, owner: UserEntity, mirror: boolean, clientGone?: AbortSignal): Promise<Claim> {
    const settings = this.mirrorConfig;
    const mirrorItem = `mirror:${owner.id}`;
    const mirrorLimit = mirror && !viewer.isAdmin && settings.maxPerOwner >= 0 ? settings.maxPerOwner : undefined;
    try {
      return await this.claims.takeWhenRoom(
        'migrations',
        async (active) => {
          if (mirrorLimit !== undefined) {
            const owned = (await this.mirrors.countOfOwner(owner.id)) + active.filter((claim) => claim.item === mirrorItem).length;
            if (owned >= mirrorLimit) throw new ForbiddenError(`the owner has reached the limit of ${mirrorLimit} pull mirrors`);
          }
          if (active.length >= settings.migrationMaxConcurrency) return 'full';
          if (active.filter((claim) => claim.ownerId === viewer.user.id).length >= settings.migrationMaxPerUser) return 'full';
          return { item: mirror ? mirrorItem : 'copy', ownerId: viewer.user.id, amount: 1 };
        },
        { signal: clientGone, deadlineMs: settings.migrationQueueTimeoutMs },
      );
    } catch (error) {
      if (error instanceof ClaimWaitEnded) throw new ServiceUnavailableError('too many migrations in progress, try again later', 10);
      throw error;
    }
  }

  private async cloneAndCreate(
    viewer: AuthContext,
    owner: UserEntity,
    option: MigrateRepositoryOption,
    interval: ReturnType<typeof parseMirrorInterval> | null,
    url: URL,
    source: Awaited<ReturnType<HostPolicy['vet']>>,
    reservation: QuotaReservation,
    clientGone?: AbortSignal,
  ): Promise<RepositoryWire> {
    const credentials = credentialsOf(option);
    const workDir = await this.gitRepositories.incomingPath();
    try {
      try {
        await this.remotes.cloneMirror(url.href, workDir, {
          credentials,
          pin: source,
          timeoutMs: this.mirrorConfig.cloneTimeoutMs,
          signal: clientGone,
          maxBytes: reservation.amount === Infinity ? undefined : reservation.amount,
        });
      } catch (error) {
        if (error instanceof RemoteTooLargeError) throw new QuotaExceededError(owner.id, owner.name);
        if (error instanceof GitAbortedError) throw new ServiceUnavailableError('the migration was stopped: its client went away', 1);
        throw this.cloneFailure(error);
      }
      faultPoint('migration.cloned');
      if (interval) await this.remotes.addTagRefspec(workDir);
      else await this.remotes.removeOrigin(workDir);
      // `lfs: true`: the source's LFS objects come along, reserved in the owner's quota and stored before the
      // row; their rows are written with it. The clone's reservation holds all the owner had left, which a rule
      // covering both (`size:git:all`, `size:all`) would leave to the objects: it gives way to one of the clone's
      // size first.
      let gitReservation = reservation;
      if (option.lfs === true && reservation.amount !== Infinity) {
        const cloned = await this.gitRepositories.size(workDir);
        await reservation.release();
        gitReservation = await this.quota.reserve(owner, 'size:repos:all', option.private === true ? 'reposPrivate' : 'reposPublic', cloned);
      }
      try {
        const lfs =
          option.lfs === true
            ? await this.lfs.fetch({
                dir: workDir,
                endpoint: lfsEndpointOf(url, option.lfs_endpoint),
                credentials,
                owner,
                signal: clientGone,
                what: 'migration',
              })
            : null;
        try {
          if (clientGone?.aborted) throw new ServiceUnavailableError('the migration was stopped: its client went away', 1);
          return await this.create(viewer, owner, option, interval, url, workDir, credentials, gitReservation, lfs);
        } finally {
          await lfs?.release();
        }
      } finally {
        await gitReservation.release();
      }
    } finally {
      // Gone already when it was moved into place; otherwise nothing of the attempt stays.
      await fs.rm(workDir, { recursive: true, force: true });
    }
  }

  /** The row (with the mirror's record and the LFS objects' rows) and the directory, together. */
  private async create(
    viewer: AuthContext,
    owner: UserEntity,
    option: MigrateRepositoryOption,
    interval: ReturnType<typeof parseMirrorInterval> | null,
    url: URL,
    workDir: string,
    credentials: RemoteCredentials | undefined,
    reservation: QuotaReservation,
    lfs: LfsFetched | null,
  ): Promise<RepositoryWire> {
    const isEmpty = !(await this.remotes.hasCommits(workDir));
    // The source's HEAD branch; `main` for an empty source.
    const defaultBranch = isEmpty ? DEFAULT_BRANCH : ((await this.remotes.headBranch(workDir)) ?? DEFAULT_BRANCH);
    await this.gitRepositories.setHead(workDir, defaultBranch);
    const now = this.clock.nowUnix();
    return await this.creation.createFromDirectory(
      viewer,
      owner,
      {
        name: option.repo_name,
        description: option.description ?? '',
        isPrivate: option.private === true,
        isEmpty,
        isMirror: interval !== null,
        mirrorInterval: interval?.display ?? '',
        mirrorUpdatedUnix: interval ? now : 0,
        originalUrl: url.href,
        defaultBranch,
        objectFormatName: await this.remotes.objectFormat(workDir),
        gitSize: await this.gitRepositories.size(workDir),
      },
      workDir,
      async (tx, row) => {
        await reservation.settle(tx);
        await lfs?.link(tx, row.id);
        if (!interval) return;
        await this.mirrors.insert(tx, {
          repoId: row.id,
          intervalSeconds: interval.seconds,
          nextUpdateUnix: interval.seconds > 0 ? now + interval.seconds : 0,
          credentials: credentials ? this.credentials.seal(credentials) : '',
          // Forgejo keeps the endpoint only for a mirror that fetches LFS objects.
          lfs: option.lfs === true,
          lfsEndpoint: option.lfs === true ? (option.lfs_endpoint ?? '') : '',
        });
      },
    );
  }

  /** `repo_owner`, else `uid`, else the caller; unknown → 422 with Forgejo's ErrUserNotExist text. */
  private async owner(viewer: AuthContext, option: MigrateRepositoryOption): Promise<UserEntity> {
    requireSignedIn(viewer);
    if (option.repo_owner) {
      const owner = await this.users.byName(option.repo_owner);
      if (!owner) throw new InvalidInputError(`user does not exist [uid: 0, name: ${option.repo_owner}]`);
      return owner;
    }
    if (option.uid) {
      const owner = await this.users.byId(option.uid);
      if (!owner) throw new InvalidInputError(`user does not exist [uid: ${option.uid}, name: ]`);
      return owner;
    }
    return viewer.user;
  }

  private async assertMayCreateIn(viewer: AuthContext, owner: UserEntity): Promise<void> {
    requireSignedIn(viewer);
    if (viewer.isAdmin) return;
    if (!owner.isOrganization) {
      if (owner.id !== viewer.user.id) throw new ForbiddenError('Given user is not an organization.');
      return;
    }
    if (!(await this.organizationPolicy.isOwner(viewer, owner.id))) throw new ForbiddenError('Given user is not owner of organization.');
  }

  /** Authentication and other git failures → 422 with git's first `fatal:` line; the rest → 500. */
  private cloneFailure(error: unknown): Error {
    if (error instanceof GitTimeoutError) {
      return new InvalidInputError(`Migration failed: clone timed out after ${Math.round(this.mirrorConfig.cloneTimeoutMs / 1000)} s.`);
    }
    if (!(error instanceof GitError) || error instanceof GitUnavailableError) return error as Error;
    const reason = gitFailureReason(error.stderr);
    this.logger.warn(`migration clone failed: ${reason}`);
    if (/Authentication failed|could not read Username|Bad credentials/.test(error.stderr)) {
      return new InvalidInputError(`Authentication failed: ${reason}.`);
    }
    return new InvalidInputError(`Migration failed: ${reason}.`);
  }
}

/** git's first `fatal:` line without its prefix (else its first line), credentials in URLs replaced. */
export function gitFailureReason(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const fatal = lines.find((line) => line.startsWith('fatal:'));
  const reason = fatal ? fatal.slice('fatal:'.length).trim() : (lines[0] ?? 'git failed');
  return sanitizeCredentialUrls(reason).replace(/\.$/, '');
}

/** Basic credentials, or the token as the password of `auth_username` or `oauth2`. */
export function credentialsOf(option: Pick<MigrateRepositoryOption, 'auth_username' | 'auth_password' | 'auth_token'>): RemoteCredentials | undefined {
  const username = option.auth_username ?? '';
  const password = option.auth_password ?? '';
  const token = option.auth_token ?? '';
  if (username !== '' || password !== '') {
    if (password === '' && token !== '') return { username: username || 'oauth2', password: token };
    return { username, password };
  }
  if (token !== '') return { username: 'oauth2', password: token };
  return undefined;
}
