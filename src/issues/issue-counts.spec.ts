import type { RepositoryEntity } from '../repos/repository.entity';
import { totalFromCounters } from './issue-counts';

const repo = { numIssues: 10, numClosedIssues: 3, numPulls: 5, numClosedPulls: 1 } as RepositoryEntity;

describe('totalFromCounters', () => {
  it.each([
    [{}, 15],
    [{ isClosed: false }, 11],
    [{ isClosed: true }, 4],
    [{ isPull: false }, 10],
    [{ isPull: false, isClosed: false }, 7],
    [{ isPull: false, isClosed: true }, 3],
    [{ isPull: true }, 5],
    [{ isPull: true, isClosed: false }, 4],
    [{ isPull: true, isClosed: true }, 1],
    [{ repoId: 7, isClosed: false, posterId: undefined }, 11],
  ])('answers a list narrowed by state and type only: %j → %d', (criteria, total) => {
    expect(totalFromCounters(repo, criteria)).toBe(total);
  });

  it.each([
    [{ labelIds: [1] }],
    [{ words: ['chart'] }],
    [{ posterId: 2 }],
    [{ milestoneIds: [] }],
    [{ updatedAfter: 0, isClosed: false }],
    [{ mentionedId: 4 }],
  ])('leaves any other filter to the store: %j', (criteria) => {
    expect(totalFromCounters(repo, criteria)).toBeUndefined();
  });
});
