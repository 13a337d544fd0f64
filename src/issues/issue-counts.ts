import type { RepositoryEntity } from '../repos/repository.entity';
import type { IssueCriteria } from './issue.store';

/** The criteria a repository's counters answer: its state and its type, nothing else. */
const COUNTED_BY_REPOSITORY: ReadonlySet<keyof IssueCriteria> = new Set(['repoId', 'isPull', 'isClosed']);

/**
 * How many issues of one repository a list matches, read off the repository's counters (numIssues,
 * numClosedIssues, numPulls, numClosedPulls move in the same transactions as the rows they count) when the list
 * is narrowed by nothing but its state and type; undefined otherwise, and the store counts. The lists Renovate,
 * tea and the web read most (open issues, `state=all&type=issues`) then cost one page, not a count of the
 * repository's issues.
 */
export function totalFromCounters(repo: RepositoryEntity, criteria: IssueCriteria): number | undefined {
  for (const [key, value] of Object.entries(criteria)) {
    if (value !== undefined && !COUNTED_BY_REPOSITORY.has(key as keyof IssueCriteria)) return undefined;
  }
  const issues = { all: repo.numIssues, closed: repo.numClosedIssues };
  const pulls = { all: repo.numPulls, closed: repo.numClosedPulls };
  const kinds = criteria.isPull === undefined ? [issues, pulls] : [criteria.isPull ? pulls : issues];
  let total = 0;
  for (const kind of kinds) {
    if (criteria.isClosed === undefined) total += kind.all;
    else total += criteria.isClosed ? kind.closed : kind.all - kind.closed;
  }
  return total;
}
