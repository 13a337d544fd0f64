import * as fs from 'node:fs';
import * as path from 'node:path';
import { LifecycleEvents } from './lifecycle-events';
import { SUBSCRIPTIONS } from './subscribers';

const user = { id: 7 } as never;
const tx = {} as never;

describe('LifecycleEvents', () => {
  it('awaits the handlers one after the other, in the order they subscribed, and answers what each answered', async () => {
    const events = new LifecycleEvents();
    const ran: string[] = [];
    events.subscribe('repository.deleted', async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      ran.push('first');
    });
    const after = async () => undefined;
    events.subscribe('repository.deleted', () => {
      ran.push('second');
      return after;
    });
    expect(await events.emit('repository.deleted', { tx, repo: { id: 1 } as never, doerId: 7 })).toEqual([undefined, after]);
    expect(ran).toEqual(['first', 'second']);
  });

  it('stops at the first handler that throws and throws its error (the caller’s transaction is undone)', async () => {
    const events = new LifecycleEvents();
    const ran: string[] = [];
    events.subscribe('user.deleted', () => {
      ran.push('first');
    });
    events.subscribe('user.deleted', async () => {
      throw new Error('still owns packages');
    });
    events.subscribe('user.deleted', () => {
      ran.push('third');
    });
    await expect(events.emit('user.deleted', { tx, user })).rejects.toThrow('still owns packages');
    expect(ran).toEqual(['first']);
  });

  it('settle logs a failure and goes on; any stops at the first yes; signal runs at once', async () => {
    const events = new LifecycleEvents();
    const ran: string[] = [];
    events.subscribe('refs.changed', async () => {
      throw new Error('gone');
    });
    events.subscribe('refs.changed', () => {
      ran.push('after the failure');
    });
    const failures: unknown[] = [];
    await events.settle('refs.changed', { repositoryId: 1, updates: [], senderId: 1 }, (error) => failures.push(error));
    expect({ ran, failures: failures.map((error) => (error as Error).message) }).toEqual({ ran: ['after the failure'], failures: ['gone'] });

    expect(await events.any('key-material.claimed', { fingerprint: 'SHA256:x', tx })).toBe(false);
    const asked: string[] = [];
    events.subscribe('key-material.claimed', () => (asked.push('a'), true));
    events.subscribe('key-material.claimed', () => (asked.push('b'), true));
    expect(await events.any('key-material.claimed', { fingerprint: 'SHA256:x', tx })).toBe(true);
    expect(asked).toEqual(['a']);

    let signalled = false;
    events.subscribe('activity.committed', () => {
      signalled = true;
    });
    expect(events.heard('activity.committed')).toBe(true);
    expect(events.heard('push.committed')).toBe(false);
    events.signal('activity.committed', undefined);
    expect(signalled).toBe(true);
  });
});

describe('subscribers.ts', () => {
  const SRC = path.resolve(__dirname, '..');

  it('subscribes every lifecycle provider of every module, and nothing else subscribes', () => {
    const lifecycleFiles = fs
      .readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .flatMap((entry) => fs.readdirSync(path.join(SRC, entry.name)).filter((name) => name.endsWith('-lifecycle.ts')));
    const subscribed = new Set(SUBSCRIPTIONS.map((subscription) => subscription.provider.name));
    const classes = lifecycleFiles.map((file) =>
      file
        .replace('-lifecycle.ts', '')
        .split('-')
        .map((part) => part[0].toUpperCase() + part.slice(1))
        .join('')
        .concat('Lifecycle'),
    );
    expect(classes.length).toBeGreaterThan(10);
    expect(classes.filter((name) => !subscribed.has(name))).toEqual([]);
    // Only the bus's own list calls subscribe.
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && /\.subscribe\(/.test(fs.readFileSync(full, 'utf8')))
          offenders.push(path.relative(SRC, full));
      }
    };
    walk(SRC);
    expect(offenders).toEqual([path.join('events', 'subscribers.ts')]);
  });

  it('keeps the order of the deletion cleaners: packages refuse before webhooks, OAuth2 and reviews are cleaned', () => {
    const order = (event: string) => SUBSCRIPTIONS.filter((subscription) => subscription.event === event).map((subscription) => subscription.provider.name);
    expect(order('user.deleted')).toEqual([
      'UsersLifecycle',
      'QuotaLifecycle',
      'ReposLifecycle',
      'LabelsLifecycle',
      'IssuesLifecycle',
      'LfsLifecycle',
      'KeysLifecycle',
      'CollaboratorsLifecycle',
      'PackagesLifecycle',
      'WebhooksLifecycle',
      'OAuth2ApplicationsService',
      'ReviewsService',
    ]);
    expect(order('repository.deleted')[0]).toBe('ForksService');
    expect(order('repository.deleted')).toHaveLength(17);
  });
});
