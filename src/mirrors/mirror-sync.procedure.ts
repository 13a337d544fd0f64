import { hostname } from 'node:os';
import { faultPoint } from '../common/fault-points';
import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Claims } from '../claims/claims';
import { QuotaExceededError } from '../common/errors';
import { Clock } from '../common/time';
import { QUOTA_GATE, QuotaGate, QuotaReservation } from '../quota/quota-gate';
import { MirrorConfig } from '../config/slices';
import { Leases } from '../database/leases';
import { GitAbortedError, GitError } from '../git/git-command';
import { GitRemotes, isBrokenRefError, RemoteConnection } from '../git/git-remotes';
import { GitRepositories } from '../git/git-repositories';
import { RepositoryPaths } from '../git/repository-paths';
import { RepositoryEvents } from '../events/repository-events';
import { diffRefs, GitPushCommits } from '../git/git-push-commits';
import { firstBranch, RepositoryPushes } from '../repos/repository-pushes.service';
import type { RepositoryEntity } from '../repos/repository.entity';
import { RepositoryDirectory } from '../repos/repository-directory';
import { UserAccounts } from '../users/user-accounts';
import { parseCloneAddress, sanitizeCredentialUrls } from './clone-address';
import { HostPolicy } from '../outbound/host-policy';
import { MirrorCredentials } from './mirror-credentials';
import { MirrorStore } from './mirror.store';
import type { MirrorEntity } from './mirror.entity';
import { LfsFetch, lfsEndpointOf } from './lfs-fetch';
import { Transactions } from '../database/transactions';

/** A failed sync is tried again this long after. */
export const RETRY_AFTER_FAILURE_SECONDS = 600;

/**
 * `elsewhere`: another process holds the mirror's claim and took it after this request arrived, so its sync
 * serves this request too (two requests at once on two instances fetch once).
 */
export type SyncOutcome = 'synced' | 'failed' | 'busy' | 'elsewhere' | 'gone' | 'stopped';

/**
 * One sync of one pull mirror (docs/mirrors.md), under the mirror's claim in the database: policy
 * recheck → `fetch --prune --tags` (all refs in one transaction) with the broken-ref recovery → on success
 * the repository's record follows, then the LFS objects of a mirror made with `lfs: true`; on failure nothing
 * changes but the next due time.
 */
@Injectable()
export class MirrorSyncProcedure {
  private readonly logger = new Logger('MirrorSync');
  /** Who holds claims taken by this process. */
  readonly holder = `${hostname().slice(0, 32)}:${process.pid}:${randomBytes(4).toString('hex')}`;

  constructor(
    private readonly mirrorConfig: MirrorConfig,
    private readonly mirrors: MirrorStore,
    private readonly repositories: RepositoryDirectory,
    private readonly users: UserAccounts,
    private readonly paths: RepositoryPaths,
    private readonly remotes: GitRemotes,
    private readonly gitRepositories: GitRepositories,
    private readonly policy: HostPolicy,
    private readonly credentials: MirrorCredentials,
    private readonly leases: Leases,
    private readonly clock: Clock,
    private readonly events: RepositoryEvents,
    private readonly refLister: GitPushCommits,
    private readonly pushes: RepositoryPushes,
    private readonly claims: Claims,
    @Inject(QUOTA_GATE) private readonly quota: QuotaGate,
    private readonly lfs: LfsFetch,
    private readonly transactions: Transactions,
  ) {}

  /**
   * A claim outlives the longest sync (two fetches, a prune and the LFS objects' time limit), so only a dead
   * holder's claim expires while it is still wanted.
   */
  private get claimSeconds(): number {
    return Math.ceil((3 * this.mirrorConfig.fetchTimeoutMs + this.mirrorConfig.lfsTimeoutMs) / 1000) + 60;
  }

  /**
   * `requestedAt`: when the request this run serves arrived (milliseconds). A sync of this mirror that another
   * process started since (or at once: AT_ONCE_MS) serves the request as well: every sync records when it
   * started, before it fetches.
   */
  async run(repoId: number, signal: AbortSignal, requestedAt?: number): Promise<SyncOutcome> {
    const startedAt = Date.now();
    const now = this.clock.nowUnix();
    let claimed: boolean;
    try {
      claimed = await this.mirrors.claim(repoId, this.holder, now, now + this.claimSeconds);
    } catch (error) {
      // Galera refused this claim at certification: another node's claim of the same mirror won.
      if (!isWriteConflict(error)) throw error;
      claimed = false;
    }
    const servedElsewhere = async () => {
      if (requestedAt === undefined) return false;
      const started = await this.leases.markOf(syncStartMark(repoId));
      return !started.mine && started.moment > requestedAt - AT_ONCE_MS;
    };
    if (!claimed) return (await servedElsewhere()) ? 'elsewhere' : 'busy';
    let nextUpdate: number | null = null;
    try {
      // Another process's sync started after the request and has finished (its claim is free): nothing to add.
      if (await servedElsewhere()) return 'elsewhere';
      await this.leases.mark(syncStartMark(repoId), startedAt);
      const repo = await this.repositories.byId(repoId);
      const mirror = await this.mirrors.findByRepository(repoId);
      const owner = repo ? await this.users.byId(repo.ownerId) : null;
      if (!repo || !repo.isMirror || !mirror || !owner) return 'gone';
      const dir = this.paths.repository(owner.name, repo.name);
      // At most MIRROR_SYNC_MAX_PER_USER syncs of one owner's mirrors run at once over every instance; the
      // others are busy and come back later.
      const turn = await this.claims.take('mirror-syncs', async (active) =>
        active.filter((claim) => claim.ownerId === owner.id).length >= this.mirrorConfig.syncMaxPerOwner
          ? 'full'
          : { item: 'sync', ownerId: owner.id, amount: 1 },
      );
      if (turn === 'full') return 'busy';
      try {
        // The fetch's byte budget is what the owner has left of `size:repos:all`, reserved before it starts.
        let reservation: QuotaReservation;
        try {
          reservation = await this.quota.reserve(
            { id: owner.id, name: owner.name },
            'size:repos:all',
            repo.isPrivate ? 'reposPrivate' : 'reposPublic',
            'remaining',
          );
        } catch (error) {
          if (!(error instanceof QuotaExceededError)) throw error;
          this.logger.warn(`sync of mirror ${owner.name}/${repo.name} skipped: the owner is over quota`);
          nextUpdate = this.clock.nowUnix() + RETRY_AFTER_FAILURE_SECONDS;
          return 'failed';
        }
        try {
          // The refs before the fetch, only when a hook listens: their changes are the sync's push events.
          const refsBefore = (await this.events.listensTo(repo)) ? await this.refLister.refs(dir) : null;
          try {
            await this.fetch(dir, repo, mirror.credentials, signal, reservation.amount === Infinity ? undefined : reservation.amount);
          } catch (error) {
            if (error instanceof GitAbortedError) return 'stopped';
            this.logger.warn(`sync of mirror ${owner.name}/${repo.name} failed: ${describe(error)}`);
            nextUpdate = this.clock.nowUnix() + RETRY_AFTER_FAILURE_SECONDS;
            return 'failed';
          }
          faultPoint('mirror.fetched');
          await this.recordSuccess(repo, dir, this.clock.nowUnix(), refsBefore, reservation);
        } finally {
          await reservation.release();
        }
        // After the fetch's reservation is given back: it holds all the owner had left, which a rule covering
        // both (`size:git:all`, `size:all`) would otherwise leave to the LFS objects.
        if (mirror.lfs) await this.fetchLfs(repo, owner, dir, mirror, signal);
        const done = this.clock.nowUnix();
        nextUpdate = mirror.intervalSeconds > 0 ? done + mirror.intervalSeconds : 0;
        return 'synced';
      } finally {
        await turn.release();
      }
    } finally {
      await this.mirrors.release(repoId, this.holder, nextUpdate);
    }
  }

  private async fetch(dir: string, repo: RepositoryEntity, sealedCredentials: string, signal: AbortSignal, maxBytes: number | undefined): Promise<void> {
    // Step 1: the address may resolve elsewhere by now (host policy, docs/mirrors.md); the vetted addresses are pinned for the fetch.
    const source = await this.policy.vet(parseCloneAddress(repo.originalUrl));
    const access: RemoteConnection = {
      credentials: this.credentials.open(sealedCredentials),
      pin: source,
      timeoutMs: this.mirrorConfig.fetchTimeoutMs,
      signal,
      maxBytes,
    };
    try {
      await this.remotes.fetchMirror(dir, access);
    } catch (error) {
      if (!(error instanceof GitError) || !isBrokenRefError(error.stderr)) throw error;
      await this.remotes.pruneOrigin(dir, access);
      await this.remotes.fetchMirror(dir, access);
    }
  }

  /**
   * The LFS objects the mirrored refs point to and the mirror does not hold yet, from the source's LFS server
   * (lfs-fetch.ts: limits, quota, host policy, verification), their rows and the repository's LFS size in one
   * transaction. As in Forgejo, a failure here is logged and the sync still counts: the refs are fetched, and
   * the next sync asks for the objects again.
   */
  private async fetchLfs(repo: RepositoryEntity, owner: { id: number; name: string }, dir: string, mirror: MirrorEntity, signal: AbortSignal): Promise<void> {
    const what = `mirror ${owner.name}/${repo.name}`;
    try {
      const endpoint = lfsEndpointOf(parseCloneAddress(repo.originalUrl), mirror.lfsEndpoint || undefined);
      const fetched = await this.lfs.fetch({
        dir,
        endpoint,
        credentials: this.credentials.open(mirror.credentials),
        owner,
        repositoryId: repo.id,
        signal,
        what,
      });
      try {
        if (fetched.pointers.length > 0) await this.transactions.run((tx) => fetched.link(tx, repo.id));
      } finally {
        await fetched.release();
      }
    } catch (error) {
      if (error instanceof QuotaExceededError) this.logger.warn(`${what}: LFS objects not fetched: the owner is over its size:git:lfs quota`);
      else this.logger.warn(`${what}: LFS objects not fetched: ${describe(error)}`);
    }
  }

  /** After a fetch: `mirror_updated`, size, the first branch of an empty mirror, `updated_at` from the newest branch. */
  private async recordSuccess(
    repo: RepositoryEntity,
    dir: string,
    now: number,
    refsBefore: Map<string, string> | null,
    reservation: QuotaReservation,
  ): Promise<void> {
    const changes: Partial<RepositoryEntity> = { mirrorUpdatedUnix: now };
    if (repo.isEmpty) {
      const branch = firstBranch(repo.defaultBranch, await this.remotes.branches(dir));
      if (branch !== undefined) {
        await this.gitRepositories.setHead(dir, branch);
        changes.defaultBranch = branch;
        changes.isEmpty = false;
      }
    }
    const newest = await this.remotes.newestBranchCommitTime(dir);
    if (newest !== null) changes.updatedUnix = newest;
    changes.gitSize = await this.gitRepositories.size(dir);
    const refChanges = refsBefore ? await this.pushes.refChanges(dir, diffRefs(refsBefore, await this.refLister.refs(dir))) : [];
    // A sync is pushed by the mirror's owner, as Forgejo reports it.
    if (await this.pushes.writeRefChanges(repo, changes, repo.ownerId, refChanges, reservation)) this.events.committed();
  }
}

/** A failure for the log: git's message (which names the URL, never credentials), sanitised once more. */
function describe(error: unknown): string {
  const message =
    error instanceof GitError ? `${error.message}${error.stderr ? ` — ${error.stderr.trim().split('\n').slice(-1)[0]}` : ''}` : (error as Error).message;
  return sanitizeCredentialUrls(message);
}

/**
 * Requests on two instances this close together count as made at once: the sync another process started up to
 * this long before a request arrived serves it too (the two HTTP requests race through each instance's
 * authentication and queue, so "at once" is never the same millisecond). Within one process a request for a
 * running sync still queues exactly one more run.
 */
const AT_ONCE_MS = 2_000;

/** Where every process records when a sync of the mirror last started. */
function syncStartMark(repoId: number): string {
  return `mirror-sync-started:${repoId}`;
}

function isWriteConflict(error: unknown): boolean {
  const e = error as { code?: string; driverError?: { code?: string } };
  const code = e.driverError?.code ?? e.code;
  return code === 'ER_LOCK_DEADLOCK' || code === 'ER_LOCK_WAIT_TIMEOUT';
}
