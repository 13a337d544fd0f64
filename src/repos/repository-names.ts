import { InvalidInputError } from '../common/errors';
import type { FieldRule } from '../common/fields';
import { isValidBranchName } from '../git/ref-names';

/** Repository names refused because they would collide with paths of a code host. */
export const RESERVED_REPOSITORY_NAMES = new Set(['.', '..', '-']);
export const RESERVED_REPOSITORY_PATTERNS = ['.git', '.wiki', '.rss', '.atom'];

/** The reserved-name check that follows the duplicate check (422). */
export function assertUsableRepositoryName(name: string): void {
  const lower = name.toLowerCase();
  if (RESERVED_REPOSITORY_NAMES.has(lower)) throw new InvalidInputError(`name is reserved [name: ${name}]`);
  const pattern = RESERVED_REPOSITORY_PATTERNS.find((suffix) => lower.endsWith(suffix));
  if (pattern) throw new InvalidInputError(`name pattern is not allowed [pattern: *${pattern}]`);
}

/**
 * MaxSize as a rule, so that it is checked after AlphaDashDot as Forgejo's binding `Required;AlphaDashDot;
 * MaxSize(100)` orders them.
 */
export function maxSize(limit: number): FieldRule {
  return { name: 'MaxSize', test: (value) => [...String(value)].length <= limit };
}

/** `[DefaultBranch]: GitRefName`: what `git check-ref-format --branch` accepts. */
export const GIT_REF_NAME: FieldRule = { name: 'GitRefName', test: (value) => isValidBranchName(String(value)) };

export const DEFAULT_BRANCH = 'main';
