import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { ClientChannel, Client as SshClient } from 'ssh2';
import { SshEndpoint } from '../../src/common/ssh-endpoint';
import { GitProcesses } from '../../src/git/git-processes';
import { makeRepo, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { git, repositoryDir } from '../support/git';
import { GitClient, withCredentials } from '../support/git-client';
import { generateSshKey, sshCommand } from '../support/ssh-keys';
import { startTestApp, TestApp, WITH_SSH } from '../support/test-app';
import { recordFigures } from './figures';

/**
 * No client may take more than its share of git, and what a repository's
 * owner pushes cannot make git do unbounded work. Every attacker here stops by itself (a byte budget, an
 * attempt budget, a kill after a bounded wait); what is asserted is what the server did (who got a slot, what
 * status, which connection it closed), never how fast.
 */

/** Polls (no fixed sleeps) until `probe` gives what `done` wants; fails after `attempts` tries 100 ms apart. */
async function eventually<T>(probe: () => Promise<T> | T, done: (value: T) => boolean, attempts = 300): Promise<T> {
  let value = await probe();
  for (let attempt = 0; attempt < attempts && !done(value); attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await probe();
  }
  if (!done(value)) throw new Error(`condition never held (last value: ${JSON.stringify(value)})`);
  return value;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Trickle {
  /** The status the server answered, or 'closed' when it cut the connection without one. */
  outcome: Promise<number | 'closed'>;
  /** Bytes of body sent before the server answered or closed. */
  sent(): number;
  stop(): void;
}

/**
 * A request whose body comes one byte every `intervalMs`, at most `maxBytes` of it (then the attacker stops
 * and closes: it is bounded on its own).
 */
function trickle(base: string, requestPath: string, headers: Record<string, string>, intervalMs: number, maxBytes: number): Trickle {
  const request = http.request(new URL(requestPath, base), { method: 'POST', headers: { ...headers, 'Transfer-Encoding': 'chunked' } });
  let sent = 0;
  let done = false;
  const timer = setInterval(() => {
    if (done || sent >= maxBytes) {
      clearInterval(timer);
      if (!done) request.destroy();
      return;
    }
    sent += 1;
    // '1111' announces a pkt-line of 4369 bytes that never comes in full (a '0000' would be a flush packet).
    request.write('1');
  }, intervalMs);
  const outcome = new Promise<number | 'closed'>((resolve) => {
    const settle = (value: number | 'closed') => {
      done = true;
      clearInterval(timer);
      resolve(value);
    };
    request.on('response', (response) => {
      response.resume();
      response.on('end', () => settle(response.statusCode ?? 0));
      response.on('error', () => settle('closed'));
      response.on('aborted', () => settle('closed'));
    });
    request.on('error', () => settle('closed'));
    request.on('close', () => settle('closed'));
  });
  request.flushHeaders();
  return {
    outcome,
    sent: () => sent,
    stop: () => {
      done = true;
      clearInterval(timer);
      request.destroy();
    },
  };
}

/** A GET whose answer is never read: the socket is paused as soon as the request is written. */
function stalledReader(base: string, requestPath: string): net.Socket {
  const url = new URL(base);
  const socket = net.connect(Number(url.port), url.hostname);
  socket.on('error', () => undefined);
  socket.write(`GET ${requestPath} HTTP/1.1\r\nHost: anvil.test\r\n\r\n`);
  socket.pause();
  return socket;
}

const basic = (user: TestUser) => `Basic ${Buffer.from(`${user.name}:${user.password}`).toString('base64')}`;

/** A public repository of `owner` holding one commit with a `bytes`-long file of random (incompressible) data. */
async function bigRepository(t: TestApp, base: string, client: GitClient, owner: TestUser, bytes: number): Promise<string> {
  const name = uniqueName('big');
  await makeRepo(t, owner, { name });
  const work = await client.workingCopy('main');
  fs.writeFileSync(path.join(work, 'noise.bin'), randomBytes(bytes));
  await client.ok(['add', 'noise.bin'], { cwd: work });
  await client.ok(['commit', '--quiet', '-m', 'noise'], { cwd: work });
  await client.ok(['push', '--quiet', withCredentials(base, `${owner.name}/${name}.git`, owner.name, owner.password), 'main'], { cwd: work });
  return `${owner.name}/${name}`;
}

/**
 * A commit whose tree expands to 100^5 = 10^10 paths: one blob, a tree naming it 100 times, and four more
 * levels of trees each naming the one below 100 times. Six objects, a few kilobytes on disk.
 */
async function treeBomb(client: GitClient, work: string): Promise<string> {
  const blob = (await client.run(['hash-object', '-w', '--stdin'], { cwd: work, input: 'x\n' })).stdout.trim();
  let tree = '';
  let entries = Array.from({ length: 100 }, (_, index) => `100644 blob ${blob}\tf${String(index).padStart(2, '0')}`);
  for (let level = 0; level < 5; level += 1) {
    tree = (await client.run(['mktree'], { cwd: work, input: `${entries.join('\n')}\n` })).stdout.trim();
    entries = Array.from({ length: 100 }, (_, index) => `040000 tree ${tree}\td${String(index).padStart(2, '0')}`);
  }
  return (await client.ok(['commit-tree', '-m', 'bomb', tree], { cwd: work })).trim();
}

describe('fair shares of git (H1)', () => {
  describe('peers that trickle or stop reading hold no slot', () => {
    let t: TestApp;
    let base: string;
    let client: GitClient;
    let alice: TestUser;
    let small: string;
    let big: string;

    beforeAll(async () => {
      t = await startTestApp({
        ...WITH_SSH,
        GIT_MAX_PROCESSES: '2',
        GIT_QUEUE_TIMEOUT: '1',
        GIT_TRANSFER_WINDOW: '1',
        GIT_REQUEST_BODY_TIMEOUT: '5',
        // The shares have their own test: here only the rate floor and the body deadline act.
        GIT_MAX_PROCESSES_PER_ADDRESS: '100',
        GIT_MAX_PROCESSES_PER_USER: '100',
        GIT_MAX_PROCESSES_ANONYMOUS: '100',
      });
      base = await t.listen();
      client = new GitClient();
      alice = await makeUser(t);
      small = (await makeRepo(t, alice, { autoInit: true })).full_name;
      big = await bigRepository(t, base, client, alice, 24 * 1024 * 1024);
    });

    afterAll(async () => {
      client.dispose();
      await t.close();
    });

    it('reads an anonymous upload-pack request before git starts: trickled bodies take no slot and end in 408', async () => {
      const processes = t.app.get(GitProcesses);
      // Four attackers, a byte every 400 ms, at most 60 bytes each (24 s): more than the two slots.
      const attackers = Array.from({ length: 4 }, () =>
        trickle(base, `/${small}.git/git-upload-pack`, { 'Content-Type': 'application/x-git-upload-pack-request' }, 400, 60),
      );
      await eventually(
        () => attackers.map((attacker) => attacker.sent()),
        (sent) => sent.every((count) => count >= 2),
      );
      const heldWhileTrickling = processes.clientSlotsHeld;
      const listing = await t.http.get(t.api(`/repos/${small}/contents`));
      const outcomes = await Promise.all(attackers.map((attacker) => attacker.outcome));
      const sent = attackers.map((attacker) => attacker.sent());
      recordFigures('git trickled fetch bodies', {
        attackers: attackers.length,
        heldWhileTrickling,
        listingStatus: listing.status,
        maxBytesSent: Math.max(...sent),
      });
      expect(heldWhileTrickling).toBe(0);
      expect(listing.status).toBe(200);
      // The server ended every attacker before the attacker gave up on its own.
      expect(outcomes).toEqual([408, 408, 408, 408]);
      expect(Math.max(...sent)).toBeLessThan(60);
    });

    it('stops a push whose pack trickles in, which frees its slot', async () => {
      const processes = t.app.get(GitProcesses);
      const pusher = trickle(
        base,
        `/${small}.git/git-receive-pack`,
        { 'Content-Type': 'application/x-git-receive-pack-request', Authorization: basic(alice) },
        400,
        60,
      );
      await eventually(
        () => processes.runningCount,
        (count) => count === 1,
      );
      const outcome = await pusher.outcome;
      expect(outcome).toBe('closed');
      expect(pusher.sent()).toBeLessThan(60);
      await eventually(
        () => processes.clientSlotsHeld,
        (held) => held === 0,
      );
    });

    it('stops archives whose readers stopped reading, which frees their slots', async () => {
      const processes = t.app.get(GitProcesses);
      const readers = [stalledReader(base, `/api/v1/repos/${big}/archive/main.zip`), stalledReader(base, `/api/v1/repos/${big}/archive/main.tar.gz`)];
      try {
        // Both slots are taken by the stalled downloads at first.
        await eventually(
          () => processes.clientSlotsHeld,
          (held) => held === 2,
        );
        const blockedMeanwhile = (await t.http.get(t.api(`/repos/${small}/contents`))).status;
        // Then the server gives up on them (a reader that never reads moves no byte).
        await eventually(
          () => processes.clientSlotsHeld,
          (held) => held === 0,
        );
        const listing = await t.http.get(t.api(`/repos/${small}/contents`));
        recordFigures('git stalled archive readers', { readers: readers.length, blockedMeanwhile, listingAfter: listing.status });
        expect(listing.status).toBe(200);
      } finally {
        readers.forEach((socket) => socket.destroy());
      }
    });
    it('stops a clone over SSH whose client stopped reading, which frees its slot', async () => {
      const processes = t.app.get(GitProcesses);
      const key = generateSshKey(client.home, `reader-${uniqueName('k')}`);
      expect(
        (
          await t.http
            .post(t.api('/user/keys'))
            .set(withToken(alice.token))
            .send({ title: uniqueName('k'), key: key.publicLine })
        ).status,
      ).toBe(201);
      const head = git(repositoryDir(t.dataDir, alice.name, big.split('/')[1]), 'rev-parse', 'refs/heads/main').trim();
      const ssh = new SshClient();
      ssh.on('error', () => undefined);
      try {
        // The client asks for the whole pack and then reads nothing of it: ssh2 adjusts no window, so the
        // server's channel fills, then its ring, then git's pipe.
        const stream = await new Promise<ClientChannel>((resolve, reject) => {
          ssh.on('ready', () =>
            ssh.exec(`git-upload-pack '${big}.git'`, (error, channel) => {
              if (error) return reject(error);
              let advertisement = '';
              const onData = (chunk: Buffer) => {
                advertisement += chunk.toString('latin1');
                if (!advertisement.endsWith('0000')) return;
                channel.off('data', onData);
                channel.pause();
                const want = `want ${head} side-band-64k\n`;
                channel.write(`${(want.length + 4).toString(16).padStart(4, '0')}${want}00000009done\n`);
                resolve(channel);
              };
              channel.on('data', onData);
            }),
          );
          ssh.connect({
            host: '127.0.0.1',
            port: t.app.get(SshEndpoint).port,
            username: 'git',
            privateKey: fs.readFileSync(key.privateKey),
            readyTimeout: 60_000,
          });
        });
        let exitCode: number | null = null;
        stream.on('exit', (code: number | null) => (exitCode = code));
        // The server gives up on the reader (no byte moved in a transfer window while its answer had no room)...
        await eventually(
          () => processes.clientSlotsHeld,
          (held) => held === 0,
        );
        // ...and cuts the channel: what the client then reads is part of the 24 MiB pack, and no success.
        let received = 0;
        stream.on('data', (chunk: Buffer) => (received += chunk.length));
        stream.resume();
        await new Promise((resolve) => stream.on('close', resolve));
        recordFigures('ssh stalled clone reader', { received, exitCode: String(exitCode) });
        expect(received).toBeGreaterThan(256 * 1024);
        expect(received).toBeLessThan(24 * 1024 * 1024);
        expect(exitCode).not.toBe(0);
      } finally {
        ssh.end();
      }
    });
  });

  describe('shares of one address, one user and anonymous callers', () => {
    let t: TestApp;
    let base: string;
    let client: GitClient;
    let alice: TestUser;
    let bob: TestUser;
    let small: string;
    let big: string;

    beforeAll(async () => {
      // Eight slots: an address gets four, a user two, anonymous callers four in all and two per address (the
      // batch readers of the content API may hold up to four more).
      t = await startTestApp({ ...WITH_SSH, GIT_MAX_PROCESSES: '8', GIT_QUEUE_TIMEOUT: '1' });
      base = await t.listen();
      client = new GitClient();
      alice = await makeUser(t);
      bob = await makeUser(t);
      small = (await makeRepo(t, bob, { autoInit: true })).full_name;
      big = await bigRepository(t, base, client, alice, 24 * 1024 * 1024);
    });

    afterAll(async () => {
      client.dispose();
      await t.close();
    });

    it('gives anonymous downloads from one address two slots, so signed-in callers still get theirs', async () => {
      const processes = t.app.get(GitProcesses);
      const readers = Array.from({ length: 4 }, () => stalledReader(base, `/api/v1/repos/${big}/archive/main.zip`));
      try {
        await eventually(
          () => processes.clientSlotsHeld,
          (held) => held >= 2,
        );
        // Give the other two every chance to take a slot (they wait GIT_QUEUE_TIMEOUT, then give up).
        const anonymous = await t.http.get(t.api(`/repos/${small}/branches`));
        const heldByAnonymous = processes.clientSlotsHeld;
        const signedIn = await t.http.get(t.api(`/repos/${small}/contents`)).set(withToken(bob.token));
        recordFigures('git anonymous share', {
          attackers: readers.length,
          heldByAnonymous,
          anonymousStatus: anonymous.status,
          signedInStatus: signedIn.status,
        });
        expect(heldByAnonymous).toBe(2);
        expect(anonymous.status).toBe(503);
        expect(anonymous.body.message).toMatch(/anonymous|your address/);
        expect(signedIn.status).toBe(200);
      } finally {
        readers.forEach((socket) => socket.destroy());
      }
      await eventually(
        () => processes.clientSlotsHeld,
        (held) => held === 0,
      );
    });

    it('gives one user two slots, so another user still gets one', async () => {
      const processes = t.app.get(GitProcesses);
      const pushes = Array.from({ length: 4 }, () =>
        trickle(base, `/${big}.git/git-receive-pack`, { 'Content-Type': 'application/x-git-receive-pack-request', Authorization: basic(alice) }, 200, 50),
      );
      try {
        await eventually(
          () => processes.runningCount,
          (count) => count === 2,
        );
        const others = await Promise.all(pushes.slice(0).map((push) => Promise.race([push.outcome, sleep(3000).then(() => 'held' as const)])));
        const signedIn = await t.http.get(t.api(`/repos/${small}/contents`)).set(withToken(bob.token));
        recordFigures('git user share', { pushes: pushes.length, running: processes.runningCount, bobStatus: signedIn.status });
        // Two pushes run; the other two wait for the account's slots while their clients stay.
        expect(others.filter((outcome) => outcome === 'held')).toHaveLength(4);
        expect(processes.runningCount).toBe(2);
        expect(processes.queuedCount).toBe(2);
        expect(signedIn.status).toBe(200);
      } finally {
        pushes.forEach((push) => push.stop());
      }
      await eventually(
        () => processes.clientSlotsHeld,
        (held) => held === 0,
      );
    });
  });
});

describe('budgets for what a repository makes git do (H2, H6)', () => {
  let t: TestApp;
  let base: string;
  let client: GitClient;
  let alice: TestUser;
  let bomb: string;
  let sshPort: number;
  let keyCommand: string;

  beforeAll(async () => {
    // The entry budget (GIT_MAX_TREE_ENTRIES) would refuse the bomb at push and before every walk of it
    // (tree-budgets.security-spec.ts); set above it here, the budgets behind it are what is tested.
    t = await startTestApp({
      ...WITH_SSH,
      GIT_MAX_MEMORY: '256MiB',
      GIT_COMMAND_MAX_MEMORY: '256MiB',
      GIT_ARCHIVE_MAX_SIZE: '64MiB',
      GIT_MAX_TREE_ENTRIES: '100000000000',
    });
    base = await t.listen();
    client = new GitClient();
    alice = await makeUser(t);
    const key = generateSshKey(client.home, 'alice');
    expect((await t.http.post(t.api('/user/keys')).set(withToken(alice.token)).send({ title: 'k', key: key.publicLine })).status).toBe(201);
    keyCommand = sshCommand(key.privateKey);
    sshPort = t.app.get(SshEndpoint).port;
    const name = uniqueName('bomb');
    await makeRepo(t, alice, { name });
    const work = await client.workingCopy('main');
    const commit = await treeBomb(client, work);
    await client.ok(['push', '--quiet', withCredentials(base, `${alice.name}/${name}.git`, alice.name, alice.password), `${commit}:refs/heads/main`], {
      cwd: work,
    });
    bomb = `${alice.name}/${name}`;
  });

  afterAll(async () => {
    client.dispose();
    await t.close();
  });

  it('refuses archives of a tree that expands to 10^10 paths with 413, in both formats', async () => {
    for (const format of ['zip', 'tar.gz']) {
      const response = await t.http.get(t.api(`/repos/${bomb}/archive/main.${format}`));
      expect(response.status).toBe(413);
      expect(response.body.message).toMatch(/more than \d+ files/);
    }
    expect(t.app.get(GitProcesses).slotsHeld).toBe(0);
  });

  it('refuses archives whose files add up to more than GIT_ARCHIVE_MAX_SIZE, and serves ordinary ones whole', async () => {
    const name = uniqueName('copies');
    await makeRepo(t, alice, { name });
    const work = await client.workingCopy('main');
    // One 1 MiB blob named 100 times: 100 MiB of files from a few kilobytes of objects.
    fs.writeFileSync(path.join(work, 'zeros'), Buffer.alloc(1024 * 1024));
    const blob = (await client.ok(['hash-object', '-w', 'zeros'], { cwd: work })).trim();
    const entries = Array.from({ length: 100 }, (_, index) => `100644 blob ${blob}\tcopy${index}`).join('\n');
    const tree = (await client.run(['mktree'], { cwd: work, input: `${entries}\n` })).stdout.trim();
    const commit = (await client.ok(['commit-tree', '-m', 'copies', tree], { cwd: work })).trim();
    await client.ok(['push', '--quiet', withCredentials(base, `${alice.name}/${name}.git`, alice.name, alice.password), `${commit}:refs/heads/main`], {
      cwd: work,
    });
    const refused = await t.http.get(t.api(`/repos/${alice.name}/${name}/archive/main.zip`));
    expect(refused.status).toBe(413);
    const ordinary = (await makeRepo(t, alice, { autoInit: true })).full_name;
    const archive = await t.http
      .get(t.api(`/repos/${ordinary}/archive/main.zip`))
      .buffer(true)
      .parse((response, done) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(archive.status).toBe(200);
    // A whole zip ends with its end-of-central-directory record.
    expect((archive.body as Buffer).includes(Buffer.from([0x50, 0x4b, 0x05, 0x06]))).toBe(true);
  });

  it('answers the contents listing and the history of such a tree with 422 once git ran out of its budget', async () => {
    const listing = await t.http.get(t.api(`/repos/${bomb}/contents`));
    const history = await t.http.get(t.api(`/repos/${bomb}/commits`));
    const subdirectory = await t.http.get(t.api(`/repos/${bomb}/contents/d00`));
    recordFigures('git tree bomb', { listing: listing.status, history: history.status, subdirectory: subdirectory.status });
    expect(listing.status).toBe(422);
    expect(listing.body.message).toMatch(/too large/);
    expect(history.status).toBe(422);
    expect(subdirectory.status).toBe(422);
  });

  it('stops git when the client of a contents listing goes away', async () => {
    const dir = repositoryDir(t.dataDir, alice.name, bomb.split('/')[1]);
    const request = http.get(new URL(`/api/v1/repos/${bomb}/contents/d01`, base));
    request.on('error', () => undefined);
    // The git walking the tree for this request (its arguments name the repository's directory).
    const pid = await eventually(
      () => gitProcessesOn(dir, 'd01')[0],
      (found) => found !== undefined,
    );
    request.destroy();
    let largest = 0;
    await eventually(
      () => {
        largest = Math.max(largest, residentBytes(pid));
        return fs.existsSync(`/proc/${pid}`) && !isZombie(pid);
      },
      (alive) => !alive,
    );
    recordFigures('git client left', { largestResidentMiB: Math.round(largest / 1024 ** 2) });
    // Stopped when the client left, well before it reached its memory budget (256 MiB) on its own.
    expect(largest).toBeLessThan(128 * 1024 ** 2);
  });

  it('ends `git archive --remote` of such a tree over SSH by the process budget', async () => {
    const processes = t.app.get(GitProcesses);
    const archive = spawn('git', ['archive', '--format=zip', `--remote=ssh://git@127.0.0.1:${sshPort}/${bomb}.git`, 'main'], {
      env: client.env({ GIT_SSH_COMMAND: keyCommand }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const stderr: Buffer[] = [];
    archive.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    // Bounded on the client side too: if the server let it run, the test kills it and fails.
    let killedByTest = false;
    const guard = setTimeout(() => {
      killedByTest = true;
      archive.kill('SIGKILL');
    }, 120_000);
    const code = await new Promise<number | null>((resolve) => archive.on('close', (exit) => resolve(exit)));
    clearTimeout(guard);
    expect(killedByTest).toBe(false);
    expect(code).not.toBe(0);
    await eventually(
      () => processes.runningCount,
      (count) => count === 0,
    );
  });

  it('refuses sparse:oid filters, and still serves blob:none partial clones', async () => {
    const name = uniqueName('filters');
    await makeRepo(t, alice, { name, autoInit: true });
    const url = new URL(`${alice.name}/${name}.git`, base).toString();
    const sparse = await client.run([
      'clone',
      '--quiet',
      '--no-checkout',
      '--filter=sparse:oid=main:README.md',
      url,
      path.join(client.home, uniqueName('sparse')),
    ]);
    expect(sparse.code).not.toBe(0);
    expect(sparse.stderr).toMatch(/sparse:oid/);
    const partial = await client.run(['clone', '--quiet', '--filter=blob:none', url, path.join(client.home, uniqueName('partial'))]);
    expect(partial.code).toBe(0);
  });

  it('refuses a push of a tree with a `..` entry (fsck), and lists nothing of it', async () => {
    const name = uniqueName('dotdot');
    await makeRepo(t, alice, { name, autoInit: true });
    const work = await client.workingCopy('main');
    const commit = await dotDotCommit(client, work);
    const push = await client.run(['push', withCredentials(base, `${alice.name}/${name}.git`, alice.name, alice.password), `${commit}:refs/heads/evil`], {
      cwd: work,
    });
    expect(push.code).not.toBe(0);
    expect(push.stderr).toMatch(/dotdot|'\.\.'/i);
    expect((await t.http.get(t.api(`/repos/${alice.name}/${name}/branches/evil`))).status).toBe(404);
  });

  it('cuts an archive response when git fails part-way, rather than ending it as complete', async () => {
    // Such a repository cannot be pushed any more: it is planted on disk, as an older server would have let it in.
    const name = uniqueName('broken');
    await makeRepo(t, alice, { name, autoInit: true });
    const dir = repositoryDir(t.dataDir, alice.name, name);
    const work = await client.workingCopy('main');
    const commit = await dotDotCommit(client, work);
    await client.ok(['push', '--quiet', dir, `${commit}:refs/heads/broken`], { cwd: work });
    expect(git(dir, 'rev-parse', 'refs/heads/broken').trim()).toBe(commit);
    const outcome = await new Promise<{ status: number; complete: boolean; bytes: number }>((resolve) => {
      http
        .get(new URL(`/api/v1/repos/${alice.name}/${name}/archive/broken.zip`, base), (response) => {
          let bytes = 0;
          response.on('data', (chunk: Buffer) => (bytes += chunk.length));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, complete: response.complete, bytes }));
          response.on('error', () => resolve({ status: response.statusCode ?? 0, complete: false, bytes }));
          response.on('aborted', () => resolve({ status: response.statusCode ?? 0, complete: false, bytes }));
        })
        .on('error', () => resolve({ status: 0, complete: false, bytes: 0 }));
    });
    recordFigures('git failed archive', { ...outcome, complete: String(outcome.complete) });
    // Either an error status before any byte, or a cut transfer: never a complete 200.
    expect(outcome.status === 200 && outcome.complete).toBe(false);
  });
});

describe('SSH before login (H3)', () => {
  it('closes connections beyond the unauthenticated caps at once and the rest after the login grace time', async () => {
    const t = await startTestApp({ ...WITH_SSH, SSH_MAX_UNAUTHENTICATED_PER_ADDRESS: '3', SSH_MAX_UNAUTHENTICATED: '5', SSH_LOGIN_GRACE_TIME: '2' });
    try {
      const port = t.app.get(SshEndpoint).port;
      // Ten connections that send the banner and then nothing (they never close by themselves).
      const sockets = Array.from({ length: 10 }, () => {
        const socket = net.connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        // It reads (and drops) what the server sends, so that it sees the server close.
        socket.resume();
        socket.write('SSH-2.0-Attacker\r\n');
        return socket;
      });
      const closedBy = sockets.map((socket) => new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now()))));
      const states = sockets.map(() => 'open');
      closedBy.forEach((closed, index) => void closed.then(() => (states[index] = 'closed')));
      // Beyond three from this address, the server closes at once.
      await eventually(
        () => states.filter((state) => state === 'closed').length,
        (closed) => closed >= 7,
      );
      const openAtFirst = states.filter((state) => state === 'open').length;
      // The three it kept are closed by the grace time, not by us.
      await eventually(
        () => states.filter((state) => state === 'closed').length,
        (closed) => closed === 10,
      );
      recordFigures('ssh unauthenticated', { connections: sockets.length, keptAtFirst: openAtFirst });
      expect(openAtFirst).toBe(3);
      sockets.forEach((socket) => socket.destroy());
      // A real login still works afterwards.
      const user = await makeUser(t);
      const client = new GitClient();
      try {
        const key = generateSshKey(client.home, 'k');
        expect((await t.http.post(t.api('/user/keys')).set(withToken(user.token)).send({ title: 'k', key: key.publicLine })).status).toBe(201);
        const repo = (await makeRepo(t, user, { autoInit: true })).full_name;
        const listing = await client.run(['ls-remote', `ssh://git@127.0.0.1:${port}/${repo}.git`], { env: { GIT_SSH_COMMAND: sshCommand(key.privateKey) } });
        expect(listing.code).toBe(0);
        expect(listing.stdout).toContain('refs/heads/');
      } finally {
        client.dispose();
      }
    } finally {
      await t.close();
    }
  });

  it('closes a connection after SSH_MAX_AUTH_TRIES refused attempts, and caps connections in all', async () => {
    const t = await startTestApp({
      ...WITH_SSH,
      SSH_MAX_AUTH_TRIES: '3',
      SSH_MAX_CONNECTIONS: '3',
      SSH_MAX_UNAUTHENTICATED_PER_ADDRESS: '50',
      SSH_MAX_UNAUTHENTICATED: '50',
    });
    try {
      const port = t.app.get(SshEndpoint).port;
      // An attacker that would try twenty passwords (its own bound) on one connection.
      let attempts = 0;
      const ended = await new Promise<string>((resolve) => {
        const ssh = new SshClient();
        ssh.on('error', () => undefined);
        ssh.on('close', () => resolve('closed'));
        ssh.on('ready', () => {
          ssh.end();
          resolve('logged in');
        });
        ssh.connect({
          host: '127.0.0.1',
          port,
          username: 'git',
          readyTimeout: 60_000,
          authHandler: (_methods: unknown, _partial: unknown, next: (method: unknown) => void) => {
            if (attempts >= 20) return next(false);
            attempts += 1;
            next({ type: 'password', username: 'git', password: `guess-${attempts}` });
          },
        } as never);
      });
      recordFigures('ssh auth tries', { attempts });
      expect(ended).toBe('closed');
      expect(attempts).toBeLessThanOrEqual(3);

      // Total cap: three connections are kept, the others closed at once.
      const sockets = Array.from({ length: 6 }, () => {
        const socket = net.connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        socket.resume();
        return socket;
      });
      const states = sockets.map(() => 'open');
      sockets.forEach((socket, index) => socket.on('close', () => (states[index] = 'closed')));
      await eventually(
        () => states.filter((state) => state === 'closed').length,
        (closed) => closed >= 3,
      );
      await sleep(500);
      expect(states.filter((state) => state === 'open')).toHaveLength(3);
      sockets.forEach((socket) => socket.destroy());
    } finally {
      await t.close();
    }
  });
});

/** A commit whose tree has an entry named `..` (git's own client never writes one; plumbing does). */
async function dotDotCommit(client: GitClient, work: string): Promise<string> {
  const blob = (await client.run(['hash-object', '-w', '--stdin'], { cwd: work, input: 'x\n' })).stdout.trim();
  const inner = (await client.run(['mktree'], { cwd: work, input: `100644 blob ${blob}\tpasswd\n` })).stdout.trim();
  const outer = (await client.run(['mktree'], { cwd: work, input: `040000 tree ${inner}\t..\n100644 blob ${blob}\tREADME\n` })).stdout.trim();
  return (await client.ok(['commit-tree', '-m', 'dotdot', outer], { cwd: work })).trim();
}

/** Pids of `git log` processes whose arguments name the repository `dir` and the path `pathArgument`. */
function gitProcessesOn(dir: string, pathArgument: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (path.basename(args[0]) === 'git' && args.some((arg) => arg.includes(dir)) && args.includes('log') && args.includes(pathArgument))
        found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

function residentBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function isZombie(pid: number): boolean {
  try {
    return /State:\s+Z/.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return true;
  }
}
