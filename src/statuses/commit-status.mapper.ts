import { formatTime } from '../common/time';
import type { UserWire } from '../users/user.wire';
import type { CommitStatusEntity } from './commit-status.entity';
import type { CommitStatusWire } from './commit-status.wire';

/** How bad a state is: the combined state is the worst of the latest per context (lower is worse). */
const PRIORITY: Record<string, number> = { error: 0, failure: 1, warning: 2, pending: 3, success: 4 };

export function toCommitStatusWire(status: CommitStatusEntity, repoApiUrl: string, creator: UserWire | null): CommitStatusWire {
  return {
    id: status.id,
    status: status.state,
    target_url: status.targetUrl,
    description: status.description,
    url: `${repoApiUrl}/statuses/${status.sha}`,
    context: status.context,
    creator,
    created_at: formatTime(status.createdUnix),
    updated_at: formatTime(status.updatedUnix),
  };
}

/**
 * The combined state of the latest status per context: the worst one, where a later status of equal rank wins
 * ties; `error` is reported as `failure`, as the combined view of Forgejo (and GitHub) does.
 */
export function combinedState(latest: Pick<CommitStatusEntity, 'state'>[]): string {
  let state = '';
  for (const status of latest) {
    if (state === '' || (PRIORITY[status.state] ?? 99) <= (PRIORITY[state] ?? 99)) state = status.state;
  }
  return state === 'error' ? 'failure' : state;
}
