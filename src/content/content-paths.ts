import { InvalidInputError } from '../common/errors';

/**
 * A repository path as callers give it: relative, `/`-separated, without `.` or `..` segments, without a
 * `.git` segment (git refuses those in trees), and without control characters. Anything else is 422 before
 * git sees it. Trailing slashes are dropped.
 */
export function assertSafePath(raw: string): string {
  const path = raw.replace(/\/+$/, '');
  if (path.startsWith('/') || /[\x00-\x1f\x7f]/.test(raw)) throw new InvalidInputError(`path is invalid [path: ${raw}]`);
  if (path === '') return '';
  const segments = path.split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..' || segment.toLowerCase() === '.git')) {
    throw new InvalidInputError(`path is invalid [path: ${raw}]`);
  }
  return path;
}

/** A path a write names: like assertSafePath, and not the root. */
export function assertFilePath(raw: string): string {
  const path = assertSafePath(raw);
  if (path === '') throw new InvalidInputError('path is invalid [path: ]');
  return path;
}
