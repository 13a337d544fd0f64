/**
 * The quota subjects (docs/quota.md) and their parents. A rule covers a subject when it lists the subject
 * or one of its ancestors; `none` is never covered.
 */
export const QUOTA_SUBJECTS = [
  'none',
  'size:all',
  'size:git:all',
  'size:repos:all',
  'size:repos:public',
  'size:repos:private',
  'size:git:lfs',
  'size:assets:all',
  'size:assets:attachments:all',
  'size:assets:attachments:issues',
  'size:assets:attachments:releases',
  'size:assets:artifacts',
  'size:assets:packages:all',
  'size:assets:wiki',
] as const;

export type QuotaSubject = (typeof QUOTA_SUBJECTS)[number];

/** Note that `size:repos:*` sits under `size:git:all` (docs/quota.md). */
const PARENTS: Record<QuotaSubject, QuotaSubject | undefined> = {
  none: undefined,
  'size:all': undefined,
  'size:git:all': 'size:all',
  'size:repos:all': 'size:git:all',
  'size:repos:public': 'size:repos:all',
  'size:repos:private': 'size:repos:all',
  'size:git:lfs': 'size:git:all',
  'size:assets:all': 'size:all',
  'size:assets:attachments:all': 'size:assets:all',
  'size:assets:attachments:issues': 'size:assets:attachments:all',
  'size:assets:attachments:releases': 'size:assets:attachments:all',
  'size:assets:artifacts': 'size:assets:all',
  'size:assets:packages:all': 'size:assets:all',
  'size:assets:wiki': 'size:assets:all',
};

const KNOWN = new Set<string>(QUOTA_SUBJECTS);

/** Case-sensitive, as Forgejo parses subjects. */
export function isQuotaSubject(value: unknown): value is QuotaSubject {
  return typeof value === 'string' && KNOWN.has(value);
}

/** The message for a subject that is not a known quota subject. */
export function unrecognizedSubject(value: string): string {
  return `unrecognized quota limit subject: [subject: ${value}]`;
}

/** The subject itself, then its parents up to the root; empty for `none`, which nothing covers. */
export function subjectAndAncestors(subject: QuotaSubject): QuotaSubject[] {
  if (subject === 'none') return [];
  const chain: QuotaSubject[] = [];
  for (let current: QuotaSubject | undefined = subject; current; current = PARENTS[current]) chain.push(current);
  return chain;
}

/** Bytes counted per measured item; the composite subjects are sums of these (docs/quota.md). */
export interface QuotaUsage {
  reposPublic: number;
  reposPrivate: number;
  lfs: number;
  attachmentsIssues: number;
  attachmentsReleases: number;
  artifacts: number;
  packages: number;
}

export const NO_USAGE: QuotaUsage = {
  reposPublic: 0,
  reposPrivate: 0,
  lfs: 0,
  attachmentsIssues: 0,
  attachmentsReleases: 0,
  artifacts: 0,
  packages: 0,
};

/** The usage measured for one subject. */
export function usageOf(subject: QuotaSubject, used: QuotaUsage): number {
  const repos = used.reposPublic + used.reposPrivate;
  const attachments = used.attachmentsIssues + used.attachmentsReleases;
  const assets = attachments + used.artifacts + used.packages;
  switch (subject) {
    case 'none':
    case 'size:assets:wiki':
      return 0;
    case 'size:all':
      return repos + used.lfs + assets;
    case 'size:git:all':
      return repos + used.lfs;
    case 'size:repos:all':
      return repos;
    case 'size:repos:public':
      return used.reposPublic;
    case 'size:repos:private':
      return used.reposPrivate;
    case 'size:git:lfs':
      return used.lfs;
    case 'size:assets:all':
      return assets;
    case 'size:assets:attachments:all':
      return attachments;
    case 'size:assets:attachments:issues':
      return used.attachmentsIssues;
    case 'size:assets:attachments:releases':
      return used.attachmentsReleases;
    case 'size:assets:artifacts':
      return used.artifacts;
    case 'size:assets:packages:all':
      return used.packages;
  }
}

/** The usage figures Anvil measures from its tables (the other items of QuotaUsage are always 0). */
export type MeasuredItem = 'repos' | 'lfs' | 'attachmentsReleases' | 'packages';

export const MEASURED_ITEMS: readonly MeasuredItem[] = ['repos', 'lfs', 'attachmentsReleases', 'packages'];

const ONE_OF: Record<MeasuredItem, QuotaUsage> = {
  repos: { ...NO_USAGE, reposPublic: 1, reposPrivate: 1 },
  lfs: { ...NO_USAGE, lfs: 1 },
  attachmentsReleases: { ...NO_USAGE, attachmentsReleases: 1 },
  packages: { ...NO_USAGE, packages: 1 },
};

/** The measured items that the usage of `subject` sums (derived from usageOf, so the two cannot disagree). */
export function measuredItemsOf(subject: QuotaSubject): MeasuredItem[] {
  return MEASURED_ITEMS.filter((item) => usageOf(subject, ONE_OF[item]) > 0);
}
