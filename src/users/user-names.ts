import { InvalidInputError } from '../common/errors';
import type { FieldRule } from '../common/fields';

/** Names that cannot be users or organisations: they collide with routes of a code host. */
export const RESERVED_USER_NAMES = new Set([
  '.',
  '..',
  '-',
  '.well-known',
  'api',
  'metrics',
  'v2',
  'assets',
  'attachments',
  'avatar',
  'avatars',
  'repo-avatars',
  'captcha',
  'login',
  'org',
  'repo',
  'user',
  'admin',
  'explore',
  'issues',
  'pulls',
  'milestones',
  'notifications',
  'report_abuse',
  'favicon.ico',
  'manifest.json',
  'robots.txt',
  'sitemap.xml',
  'ssh_info',
  'swagger.v1.json',
  'ghost',
  'gitea-actions',
  'forgejo-actions',
]);

export const RESERVED_USER_PATTERNS = ['.keys', '.gpg', '.rss', '.atom', '.png'];

/** Starts with a letter or digit; then letters, digits, '-', '_', '.', never two of those in a row nor last. */
export const USERNAME: FieldRule = {
  name: 'Username',
  test: (value) => /^[A-Za-z0-9](?:[A-Za-z0-9]|[-_.](?=[A-Za-z0-9]))*$/.test(String(value)),
};

/** Semantic checks that follow the field rules: reserved names and patterns (422). */
export function assertUsableUserName(name: string): void {
  const lower = name.toLowerCase();
  if (RESERVED_USER_NAMES.has(lower)) throw new InvalidInputError(`name is reserved [name: ${name}]`);
  const pattern = RESERVED_USER_PATTERNS.find((suffix) => lower.endsWith(suffix));
  if (pattern) throw new InvalidInputError(`name pattern is not allowed [pattern: *${pattern}]`);
}
