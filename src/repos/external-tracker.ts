import { isIP } from 'node:net';
import { InvalidInputError } from '../common/errors';
import type { RepositoryEntity } from './repository.entity';

/**
 * An outbound link as Forgejo accepts one for an external tracker: http(s), a port in range, not this site's own
 * API, not a loopback address nor `localhost`.
 */
export function isExternalUrl(value: string, rootUrl: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (value.toLowerCase().startsWith(`${rootUrl.toLowerCase()}api`)) return false;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost') return false;
  const family = isIP(host);
  if (family === 4 && host.startsWith('127.')) return false;
  if (family === 6 && (host === '::1' || host === '0:0:0:0:0:0:0:1')) return false;
  return true;
}

/** A format with `{user}`, `{repo}`, `{index}`: a brace on one side of a placeholder only is a typo (refused). */
export function isExternalTrackerFormat(value: string, rootUrl: string): boolean {
  if (!isExternalUrl(value, rootUrl)) return false;
  for (const match of value.matchAll(/(\{?)(?:user|repo|index)+?(\}?)/g)) {
    if ((match[1] === '{') !== (match[2] === '}')) return false;
  }
  return true;
}

export interface TrackerOptions {
  has_issues?: boolean | null;
  internal_tracker?: Record<string, unknown> | null;
  external_tracker?: Record<string, unknown> | null;
}

const STYLES = ['numeric', 'alphanumeric', 'regexp'];

function stringField(object: Record<string, unknown>, name: string): string {
  const value = object[name];
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new InvalidInputError(`${name} must be a string`);
  return value;
}

function flagField(object: Record<string, unknown>, name: string): boolean {
  const value = object[name];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new InvalidInputError(`${name} must be a boolean`);
  return value;
}

/**
 * The tracker columns an edit changes, as Forgejo decides them: turning issues on (or keeping them on) with an
 * `external_tracker` replaces the built-in tracker (URL and format checked, 422); without one the built-in
 * tracker is on, with `internal_tracker`'s settings when given; `has_issues: false` turns both off.
 */
export function trackerChanges(repo: RepositoryEntity, option: TrackerOptions, rootUrl: string): Partial<RepositoryEntity> {
  const current = repo.hasIssues;
  const wanted = option.has_issues ?? current;
  if (!current && !wanted) return {};
  if (!wanted) return { hasIssues: false, externalTrackerUrl: '', externalTrackerFormat: '', externalTrackerStyle: '', externalTrackerRegexp: '' };
  if (option.external_tracker) {
    const tracker = option.external_tracker;
    const url = stringField(tracker, 'external_tracker_url');
    if (!isExternalUrl(url, rootUrl)) throw new InvalidInputError('External tracker URL not valid');
    const format = stringField(tracker, 'external_tracker_format');
    if (format !== '' && !isExternalTrackerFormat(format, rootUrl)) throw new InvalidInputError('External tracker URL format not valid');
    const style = stringField(tracker, 'external_tracker_style');
    if (style !== '' && !STYLES.includes(style)) throw new InvalidInputError('External tracker style not valid');
    const regexp = stringField(tracker, 'external_tracker_regexp_pattern');
    if (regexp.length > 1024 || url.length > 2048 || format.length > 2048) throw new InvalidInputError('External tracker setting too long');
    return { hasIssues: true, externalTrackerUrl: url, externalTrackerFormat: format, externalTrackerStyle: style, externalTrackerRegexp: regexp };
  }
  const changes: Partial<RepositoryEntity> = {
    hasIssues: true,
    externalTrackerUrl: '',
    externalTrackerFormat: '',
    externalTrackerStyle: '',
    externalTrackerRegexp: '',
  };
  if (option.internal_tracker) {
    changes.enableTimeTracker = flagField(option.internal_tracker, 'enable_time_tracker');
    changes.allowOnlyContributorsToTrackTime = flagField(option.internal_tracker, 'allow_only_contributors_to_track_time');
    changes.enableIssueDependencies = flagField(option.internal_tracker, 'enable_issue_dependencies');
  } else if (!current || repo.externalTrackerUrl) {
    // A tracker turned on anew starts from Forgejo's defaults.
    if (!current) Object.assign(changes, { enableTimeTracker: true, allowOnlyContributorsToTrackTime: true, enableIssueDependencies: true });
  }
  return changes;
}
