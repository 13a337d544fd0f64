import { combinedState } from '../statuses/commit-status.mapper';
import { parseAllowedHosts } from './allowed-hosts';
import { branchMatches, isValidBranchFilter } from './branch-filter';
import { retryDelayMs } from './webhook-delivery-loop';
import { newDeliveryUuid } from './webhook-outbox';
import { bodyForType } from './webhook-payloads';
import { requestHeaders, retryAfterMs } from './webhook-sender';

describe('branch_filter', () => {
  it('matches every branch when empty or *', () => {
    expect(branchMatches('', 'feature/x')).toBe(true);
    expect(branchMatches('*', 'feature/x')).toBe(true);
  });

  it('lets * and ? cross slashes, and reads alternatives and classes', () => {
    expect(branchMatches('release/*', 'release/1.0/hotfix')).toBe(true);
    expect(branchMatches('release/*', 'main')).toBe(false);
    expect(branchMatches('{main,develop}', 'develop')).toBe(true);
    expect(branchMatches('{main,develop}', 'dev')).toBe(false);
    expect(branchMatches('v[0-9].?', 'v1.x')).toBe(true);
    expect(branchMatches('a.b', 'axb')).toBe(false);
  });

  it('refuses unclosed alternatives and classes', () => {
    expect(isValidBranchFilter('{main')).toBe(false);
    expect(isValidBranchFilter('[abc')).toBe(false);
    expect(isValidBranchFilter('main')).toBe(true);
  });
});

describe('delivery UUIDs', () => {
  it('are version 7 and sort in the order they were made', () => {
    const made = Array.from({ length: 1000 }, () => newDeliveryUuid());
    for (const uuid of made) expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(made).size).toBe(made.length);
    expect([...made].sort()).toEqual(made);
  });
});

describe('WEBHOOK_ALLOWED_HOSTS', () => {
  it('allows global addresses only by default', () => {
    const policy = parseAllowedHosts('external');
    expect(policy.allowsAddress('93.184.216.34')).toBe(true);
    expect(policy.allowsAddress('127.0.0.1')).toBe(false);
    expect(policy.allowsAddress('10.1.2.3')).toBe(false);
    expect(policy.allowsAddress('::ffff:127.0.0.1')).toBe(false);
    expect(policy.allowsAddress('169.254.169.254')).toBe(false);
  });

  it('judges every IPv6 embedding of an IPv4 address by the address it carries', () => {
    const policy = parseAllowedHosts('external');
    for (const carried of [
      '::127.0.0.1',
      '::ffff:0:127.0.0.1',
      '64:ff9b::127.0.0.1',
      '64:ff9b:1:7f00:0:100::',
      '2606:4700::5efe:127.0.0.1',
      '::169.254.169.254',
    ]) {
      expect(policy.allowsAddress(carried)).toBe(false);
    }
    expect(policy.allowsAddress('::93.184.216.34')).toBe(true);
    expect(parseAllowedHosts('loopback').allowsAddress('::127.0.0.1')).toBe(true);
    expect(parseAllowedHosts('private').allowsAddress('::10.1.2.3')).toBe(true);
    expect(parseAllowedHosts('10.20.0.0/16').allowsAddress('::ffff:0:10.20.3.4')).toBe(true);
  });

  it('reads loopback, private, *, CIDRs and host globs', () => {
    expect(parseAllowedHosts('loopback').allowsAddress('127.0.0.1')).toBe(true);
    expect(parseAllowedHosts('private').allowsAddress('192.168.1.1')).toBe(true);
    expect(parseAllowedHosts('private').allowsAddress('fd00::1')).toBe(true);
    expect(parseAllowedHosts('private').allowsAddress('127.0.0.1')).toBe(false);
    expect(parseAllowedHosts('*').allowsAddress('169.254.169.254')).toBe(true);
    expect(parseAllowedHosts('10.20.0.0/16').allowsAddress('10.20.3.4')).toBe(true);
    expect(parseAllowedHosts('10.20.0.0/16').allowsAddress('10.21.3.4')).toBe(false);
    const globs = parseAllowedHosts('*.ci.example.com');
    expect(globs.allowsName('jenkins.ci.example.com')).toBe(true);
    expect(globs.allowsName('ci.example.com.evil.test')).toBe(false);
    expect(() => parseAllowedHosts('http://x/')).toThrow(/WEBHOOK_ALLOWED_HOSTS/);
  });
});

describe('retries', () => {
  const limits = { retryBaseMs: 1000, retryMaxMs: 3_600_000 };

  it('doubles the delay per attempt, honours a longer Retry-After and stops at the cap', () => {
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(attempt, undefined, limits))).toEqual([1000, 2000, 4000, 8000]);
    expect(retryDelayMs(1, 30_000, limits)).toBe(30_000);
    expect(retryDelayMs(30, undefined, limits)).toBe(3_600_000);
    expect(retryDelayMs(1, 10 * 3_600_000, limits)).toBe(3_600_000);
  });

  it('reads Retry-After in seconds or as an HTTP date', () => {
    expect(retryAfterMs('120')).toBe(120_000);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:01:00 GMT', Date.parse('2026-01-01T00:00:00Z'))).toBe(60_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
  });
});

describe('request headers', () => {
  it('name the delivery and event in every family, the content type as set, and carry no signature', () => {
    const headers = requestHeaders({ contentType: 'form', uuid: 'u-1', event: 'push' });
    for (const family of ['Forgejo', 'Gitea', 'Gogs', 'GitHub']) {
      expect(headers[`X-${family}-Delivery`]).toBe('u-1');
      expect(headers[`X-${family}-Event`]).toBe('push');
      expect(headers[`X-${family}-Event-Type`]).toBe('push');
    }
    expect(headers['Content-Type']).toBe('application/x-www-form-urlencoded');
    expect(requestHeaders({ contentType: 'json', uuid: 'u', event: 'push' })['Content-Type']).toBe('application/json');
    // The sending thread signs its own copy: what the history keeps never holds a signature.
    expect(Object.keys(headers).filter((name) => /signature/i.test(name))).toEqual([]);
  });

  it('shortens the ref of create and delete for the gitea format only', () => {
    const payload = JSON.stringify({ ref: 'refs/tags/v1', ref_type: 'tag' });
    expect(JSON.parse(bodyForType('gitea', 'create', payload)).ref).toBe('v1');
    expect(bodyForType('forgejo', 'create', payload)).toBe(payload);
    expect(bodyForType('gitea', 'push', payload)).toBe(payload);
  });
});

describe('combined status', () => {
  it('is the worst of the latest per context, error shown as failure, empty without statuses', () => {
    expect(combinedState([{ state: 'success' }, { state: 'pending' }])).toBe('pending');
    expect(combinedState([{ state: 'success' }, { state: 'warning' }, { state: 'pending' }])).toBe('warning');
    expect(combinedState([{ state: 'failure' }, { state: 'error' }])).toBe('failure');
    expect(combinedState([{ state: 'success' }])).toBe('success');
    expect(combinedState([])).toBe('');
  });
});
