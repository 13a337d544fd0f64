import * as http from 'node:http';
import { GitProcesses } from '../../src/git/git-processes';
import { makeRepo, makeUser } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * A receive-pack RPC (a push) whose body never ends: git waits for it, holding its process slot. (A fetch's
 * request is read whole before git starts, so it cannot hold a slot this way.)
 */
interface HeldRequest {
  request: http.ClientRequest;
  /** The response status, or 'closed' when the connection broke without one. */
  outcome: Promise<number | 'closed'>;
  /** Sends a flush packet and ends the body: git then answers and exits. */
  finish(): void;
}

function hold(base: string, repo: PushableRepo): HeldRequest {
  const request = http.request(new URL(`/${repo.path}/git-receive-pack`, base), {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-git-receive-pack-request',
      'Transfer-Encoding': 'chunked',
      Authorization: `Basic ${Buffer.from(`${repo.owner}:${repo.password}`).toString('base64')}`,
    },
  });
  const outcome = new Promise<number | 'closed'>((resolve) => {
    request.on('response', (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', () => resolve('closed'));
      response.on('aborted', () => resolve('closed'));
    });
    request.on('error', () => resolve('closed'));
  });
  request.flushHeaders();
  return { request, outcome, finish: () => request.end('0000') };
}

/** A ref advertisement (anonymous), its outcome as `hold`'s. */
function advertisement(base: string, repo: PushableRepo): { request: http.ClientRequest; outcome: Promise<number | 'closed'> } {
  const request = http.get(new URL(`/${repo.path}/info/refs?service=git-upload-pack`, base));
  const outcome = new Promise<number | 'closed'>((resolve) => {
    request.on('response', (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', () => resolve('closed'));
      response.on('aborted', () => resolve('closed'));
    });
    request.on('error', () => resolve('closed'));
  });
  return { request, outcome };
}

interface PushableRepo {
  path: string;
  owner: string;
  password: string;
}

async function publicRepo(t: TestApp): Promise<PushableRepo> {
  const owner = await makeUser(t);
  const repo = await makeRepo(t, owner, { autoInit: true });
  return { path: repo.full_name, owner: owner.name, password: owner.password };
}

/** Polls (no fixed sleeps) until `probe` gives what `done` wants; fails after many attempts. */
async function eventually<T>(probe: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const value = await probe();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('condition never held');
}

describe('limits of git processes', () => {
  describe('with one process slot', () => {
    let t: TestApp;
    let base: string;
    let repo: PushableRepo;

    beforeAll(async () => {
      t = await startTestApp({ GIT_MAX_PROCESSES: '1', GIT_QUEUE_TIMEOUT: '1' });
      base = await t.listen();
      repo = await publicRepo(t);
    });

    afterAll(async () => {
      await t.close();
    });

    it('keeps a git request waiting while its client stays, past GIT_QUEUE_TIMEOUT; refuses one address four times its share', async () => {
      const processes = t.app.get(GitProcesses);
      const held = hold(base, repo);
      await eventually(
        async () => processes.runningCount,
        (count) => count === 1,
      );
      // An anonymous address's share is one slot here: four of its requests wait, the fifth is refused at once.
      const waiting = Array.from({ length: 4 }, () => advertisement(base, repo));
      await eventually(
        async () => processes.queuedCount,
        (count) => count === 4,
      );
      const busy = await t.http.get(`/${repo.path}/info/refs?service=git-upload-pack`);
      expect(busy.status).toBe(503);
      expect(busy.headers['retry-after']).toBe('10');
      expect(busy.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(busy.text).toContain('too many git operations');
      // A client that leaves stops waiting; those that stay are served once the slot frees.
      waiting[0].request.destroy();
      await eventually(
        async () => processes.queuedCount,
        (count) => count === 3,
      );
      expect(await waiting[0].outcome).toBe('closed');
      held.finish();
      expect(await held.outcome).toBe(200);
      expect(await Promise.all(waiting.slice(1).map((request) => request.outcome))).toEqual([200, 200, 200]);
      expect((await t.http.get(`/${repo.path}/info/refs?service=git-upload-pack`)).status).toBe(200);
    });

    it('kills git when the client disconnects, which frees its slot', async () => {
      const processes = t.app.get(GitProcesses);
      const held = hold(base, repo);
      await eventually(
        async () => processes.runningCount,
        (count) => count === 1,
      );
      const queued = t.http.get(`/${repo.path}/info/refs?service=git-upload-pack`).then((response) => response.status);
      await eventually(
        async () => processes.queuedCount,
        (count) => count === 1,
      );
      // Without the kill, git would wait for the rest of the body for ever and the slot would stay taken.
      held.request.destroy();
      expect(await queued).toBe(200);
      expect(await held.outcome).toBe('closed');
    });
  });

  it('serves a queued request as soon as a slot frees', async () => {
    const t = await startTestApp({ GIT_MAX_PROCESSES: '1', GIT_QUEUE_TIMEOUT: '600' });
    try {
      const base = await t.listen();
      const repo = await publicRepo(t);
      const processes = t.app.get(GitProcesses);
      const held = hold(base, repo);
      await eventually(
        async () => processes.runningCount,
        (count) => count === 1,
      );
      const queued = t.http.get(`/${repo.path}/info/refs?service=git-upload-pack`).then((response) => response.status);
      await eventually(
        async () => processes.queuedCount,
        (count) => count === 1,
      );
      held.finish();
      expect(await held.outcome).toBe(200);
      expect(await queued).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('closes an exchange in which no byte moved for GIT_IDLE_TIMEOUT', async () => {
    const t = await startTestApp({ GIT_MAX_PROCESSES: '1', GIT_IDLE_TIMEOUT: '1' });
    try {
      const base = await t.listen();
      const repo = await publicRepo(t);
      const held = hold(base, repo);
      expect(await held.outcome).toBe('closed');
      expect((await t.http.get(`/${repo.path}/info/refs?service=git-upload-pack`)).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('lets running git exchanges finish on shutdown, refusing new ones meanwhile', async () => {
    const t = await startTestApp({ GIT_MAX_PROCESSES: '2' });
    const base = await t.listen();
    const repo = await publicRepo(t);
    const held = hold(base, repo);
    // Wait until git runs for it: the one free slot left is then the only one.
    const processes = t.app.get(GitProcesses);
    await eventually(
      async () => processes.runningCount,
      (count) => count === 1,
    );
    let closed = false;
    const closing = t.close().then(() => {
      closed = true;
    });
    await eventually(
      async () => processes.isDraining,
      (draining) => draining,
    );
    const refused = await t.http.get(`/${repo.path}/info/refs?service=git-upload-pack`);
    expect(refused.status).toBe(503);
    expect(refused.text).toContain('shutting down');
    expect(closed).toBe(false);
    held.finish();
    expect(await held.outcome).toBe(200);
    await closing;
    expect(closed).toBe(true);
  });

  it('kills what is still running when the drain time is over', async () => {
    const t = await startTestApp({ GIT_DRAIN_TIMEOUT: '0' });
    const base = await t.listen();
    const repo = await publicRepo(t);
    const held = hold(base, repo);
    const processes = t.app.get(GitProcesses);
    await eventually(
      async () => processes.runningCount,
      (count) => count === 1,
    );
    await t.close();
    expect(await held.outcome).toBe('closed');
  });
});
