import { Inject, Injectable } from '@nestjs/common';
import type { RepositoryTarget } from '../access/repository-policy';
import { BadRequestError } from '../common/errors';
import { QUOTA_GATE, QuotaGate } from '../quota/quota-gate';
import { MirrorRunner } from './mirror-runner';

/** What POST /repos/{owner}/{repo}/mirror-sync answers (403) to a caller who does not write code, in Forgejo's words. */
export const MIRROR_SYNC_REFUSED = 'user should have a permission to write to a repo';

/** POST /repos/{owner}/{repo}/mirror-sync (docs/mirrors.md). */
@Injectable()
export class MirrorSyncService {
  constructor(
    private readonly runner: MirrorRunner,
    @Inject(QUOTA_GATE) private readonly quota: QuotaGate,
  ) {}

  /**
   * 404 → public-only 403 → 401 → no write 403 (MIRROR_SYNC_REFUSED, the route's rule) → quota `size:git:all` 413 → not a mirror 400; then the sync is
   * queued and the caller gets 200 whatever the fetch later does.
   */
  async requestSync(target: RepositoryTarget): Promise<void> {
    const { repo, owner } = target;
    await this.quota.assertCanWrite(owner, 'size:git:all');
    if (!repo.isMirror) throw new BadRequestError('Repository is not a mirror');
    this.runner.request(repo.id);
  }
}
