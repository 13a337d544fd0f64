import type { AuthContext } from '../auth/auth-context';
import { Injectable } from '@nestjs/common';
import { ConflictError, DomainError, InvalidInputError, NotFoundError } from '../common/errors';
import { GitAbortedError, GitBudgetError, GitOutputTooLargeError } from '../git/git-command';
import { GitBusyError, GitProcesses } from '../git/git-processes';
import { GitEntryBudgetError } from '../git/git-tree-budget';
import type { RefInfo } from '../git/git-refs';
import type { RefUpdate } from '../git/push-hooks';
import { GitWrites, RefChangedError } from '../git/git-writes';
import { RepositoryPaths } from '../git/repository-paths';
import type { RepositoryTarget } from '../access/repository-policy';
import type { QuotaReservation } from '../quota/quota-gate';
import type { RepositoryEntity } from '../repos/repository.entity';
import { repositoryUrls } from '../repos/repository.mapper';
import { RepositoryPushes } from '../repos/repository-pushes.service';
import type { UserEntity } from '../users/user.entity';
import { SiteUrls } from '../common/site-urls';

/** 503: every git slot is taken and none freed in time (the process cap, GIT_MAX_PROCESSES). */
export class GitBusyDomainError extends DomainError {
  readonly status = 503;
  /** As git over HTTP says when it is busy. */
  readonly retryAfterSeconds = 10;
}

function domainErrorOf(error: unknown): unknown {
  if (error instanceof GitBusyError) return new GitBusyDomainError(error.message);
  if (error instanceof GitOutputTooLargeError) return new InvalidInputError(`the answer is too large to give whole: ${error.message}`);
  if (error instanceof GitEntryBudgetError) return new InvalidInputError(`the repository is too large to answer this request: ${error.message}`);
  if (error instanceof GitBudgetError)
    return new InvalidInputError('the repository is too large to answer this request: git ran out of its memory or CPU budget');
  // Stopped because the client went away: nobody reads the answer, and it is no server error.
  if (error instanceof GitAbortedError) return new GitBusyDomainError('the request was stopped: its client went away');
  return error;
}

/** The URLs content answers are built from. */
export interface ContentUrls {
  /** `<ROOT_URL>api/v1/repos/<owner>/<repo>` */
  api: string;
  /** `<ROOT_URL><owner>/<repo>` */
  html: string;
}

/** A repository a content route works on: its row, owner, directory on disk and URLs. */
export interface ContentRepository {
  target: RepositoryTarget;
  repo: RepositoryEntity;
  owner: UserEntity;
  dir: string;
  urls: ContentUrls;
}

/**
 * What content routes share: the repository the route resolved (RepositoryAssignment), the access policy's
 * write rule for changes (401, 403), and the git process cap around the git work.
 */
@Injectable()
export class ContentRepositories {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly paths: RepositoryPaths,
    private readonly processes: GitProcesses,
    private readonly pushes: RepositoryPushes,
    private readonly writes: GitWrites,
  ) {}

  /** The content view of the repository the route resolved (RepositoryAssignment applied the read rule). */
  open(target: RepositoryTarget): ContentRepository {
    const { repo, owner } = target;
    const urls = repositoryUrls(owner, repo, this.siteUrls);
    return { repo, owner, target, dir: this.paths.repository(owner.name, repo.name), urls: { api: urls.api, html: urls.html } };
  }

  /**
   * Runs git work inside one slot of the process cap (counted against the caller's share); a full cap that
   * does not free in time is a 503, and git that ran out of its memory or CPU budget a 422.
   */
  async withGit<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await this.processes.withSlot(work);
    } catch (error) {
      throw domainErrorOf(error);
    }
  }

  /**
   * Runs reads through the batch readers (GitObjects), which hold slots of the cap themselves: no slot is taken
   * here (and none may be held around them), but a reader that cannot start in time is the same 503.
   */
  async withReaders<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw domainErrorOf(error);
    }
  }

  /**
   * Deletes the ref `find` returns (404 when there is none) with compare-and-swap on the value it read (409 when
   * a concurrent writer moved it), then records the change.
   */
  async deleteRef(viewer: AuthContext, target: ContentRepository, find: () => Promise<RefInfo | undefined>): Promise<void> {
    const deleted = await this.withGit(async () => {
      const ref = await find();
      if (!ref) throw new NotFoundError();
      try {
        await this.writes.deleteRef(target.dir, ref.ref, ref.oid);
      } catch (error) {
        if (error instanceof RefChangedError) throw new ConflictError(`${ref.ref} was changed by another writer`);
        throw error;
      }
      return ref;
    });
    await this.recordRefChanges(viewer, target, [{ ref: deleted.ref, oldId: deleted.oid, newId: zeroIdLike(deleted.oid) }]);
  }

  /**
   * After refs changed on the server: size, update time, the first branch of an empty repository, and the
   * events of the change (sent by `viewer`).
   */
  async recordRefChanges(viewer: AuthContext, target: ContentRepository, updates: RefUpdate[], reservation?: QuotaReservation): Promise<void> {
    await this.pushes.recordRefChanges(target.repo.id, updates, viewer.user?.id ?? 0, reservation);
  }
}

/** The all-zero id of the same object format as `id`: the old value of a created ref, the new of a deleted one. */
export function zeroIdLike(id: string): string {
  return '0'.repeat(id.length);
}
