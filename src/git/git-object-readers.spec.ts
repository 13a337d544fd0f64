import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { AppConfig } from '../config/config';
import { BatchReader, ReaderStoppedError } from './git-batch-reader';
import { GitCommand, GitError, GitTimeoutError } from './git-command';
import { GitLauncher } from './git-launcher';
import { GitObjectReaders, READER_IDLE_MS, READERS_PER_REPOSITORY, RECLAIM_AFTER_MS } from './git-object-readers';
import { GitObjects } from './git-objects';
import { GitProcesses } from './git-processes';
import type { PushHooks } from './push-hooks';

/** A stand-in for git's process whose answers a test writes; what the reader wrote to it is collected. */
function standInGit() {
  const child = Object.assign(new EventEmitter(), {
    stdin: new PassThrough(),
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    exitCode: null,
    signalCode: null,
    kill: jest.fn(() => true),
  });
  const written: Buffer[] = [];
  child.stdin.on('data', (chunk: Buffer) => written.push(chunk));
  return { child, written };
}

describe('GitObjectReaders: long-lived cat-file --batch-command readers', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-readers-'));
  const launcher = new GitLauncher();
  const pools: GitObjectReaders[] = [];

  function setUp(maxProcesses = 8): { pool: GitObjectReaders; processes: GitProcesses; objects: GitObjects; git: GitCommand } {
    const config = { dataDir, git: { maxProcesses, queueTimeoutMs: 30_000, idleTimeoutMs: 600_000, drainTimeoutMs: 1_000 } } as AppConfig;
    const git = new GitCommand(config, config.git, launcher);
    const processes = new GitProcesses(config, config.git, {} as PushHooks, launcher);
    const pool = new GitObjectReaders(config.git, git, processes);
    pools.push(pool);
    return { pool, processes, objects: new GitObjects(pool), git };
  }

  /** A bare repository with one commit on main: a.txt, dir/b.txt, a symlink and `count` numbered files. */
  async function makeRepository(name: string, count = 0): Promise<{ dir: string; commit: string }> {
    const { git } = setUp();
    const dir = path.join(dataDir, `${name}.git`);
    await git.run(['init', '--bare', '--quiet', dir]);
    const blob = async (text: string) => (await git.run(['hash-object', '-w', '--stdin'], { gitDir: dir, input: text })).trim();
    const lines = [
      `100644 blob ${await blob('alpha\n')}\ta.txt`,
      `120000 blob ${await blob('a.txt')}\tlink`,
      `100755 blob ${await blob('#!/bin/sh\n')}\trun.sh`,
    ];
    for (let index = 0; index < count; index++) lines.push(`100644 blob ${await blob(`file ${index}\n`)}\tn${index}.txt`);
    const sub = (await git.run(['mktree'], { gitDir: dir, input: `100644 blob ${await blob('beta\n')}\tb.txt\n` })).trim();
    lines.push(`040000 tree ${sub}\tdir`);
    const tree = (await git.run(['mktree'], { gitDir: dir, input: lines.join('\n') + '\n' })).trim();
    const env = { GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com' };
    const commit = (await git.run(['commit-tree', tree, '-m', 'first'], { gitDir: dir, env })).trim();
    await git.run(['update-ref', 'refs/heads/main', commit], { gitDir: dir });
    return { dir, commit };
  }

  afterAll(async () => {
    for (const pool of pools) pool.onApplicationShutdown();
    launcher.onApplicationShutdown();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('reads refs, tree entries with their modes and sizes, and blobs; a missing object is null', async () => {
    const { dir, commit } = await makeRepository('read');
    const { objects } = setUp();
    expect(await objects.peelRefs(dir, ['refs/heads/main', 'refs/tags/main'])).toEqual(new Map([['refs/heads/main', commit]]));
    expect(await objects.resolveCommit(dir, commit.slice(0, 10))).toBe(commit);
    const file = await objects.entry(dir, commit, 'dir/b.txt');
    expect(file).toMatchObject({ mode: '100644', type: 'blob', size: 5, path: 'dir/b.txt' });
    expect((await objects.blob(dir, file!.oid))!.toString()).toBe('beta\n');
    expect(await objects.entry(dir, commit, 'link')).toMatchObject({ mode: '120000', type: 'blob', size: 5 });
    expect(await objects.entry(dir, commit, 'run.sh')).toMatchObject({ mode: '100755' });
    expect(await objects.entry(dir, commit, 'dir')).toMatchObject({ mode: '040000', type: 'tree', size: 0 });
    expect(await objects.entry(dir, commit, 'dir/missing.txt')).toBeNull();
    expect(await objects.entry(dir, commit, 'a.txt/below')).toBeNull();
    expect(await objects.blob(dir, '0'.repeat(40))).toBeNull();
    expect(await objects.resolveCommit(dir, 'no-such-branch')).toBeNull();
  });

  it('counts a ref only under its exact name (git would fall back to refs/tags/refs/heads/x)', async () => {
    const { dir, commit } = await makeRepository('exact');
    const { objects, git } = setUp();
    await git.run(['update-ref', 'refs/tags/refs/heads/ghost', commit], { gitDir: dir });
    expect(await objects.peelRefs(dir, ['refs/heads/ghost'])).toEqual(new Map());
    // Packed refs count as well.
    await git.run(['pack-refs', '--all'], { gitDir: dir });
    expect(await objects.peelRefs(dir, ['refs/heads/main', 'refs/heads/ghost'])).toEqual(new Map([['refs/heads/main', commit]]));
  });

  it('answers many concurrent requests each with its own object', async () => {
    const { dir, commit } = await makeRepository('concurrent', 60);
    const { pool, objects } = setUp();
    const names = Array.from({ length: 60 }, (_, index) => `n${index}.txt`);
    const entries = await Promise.all(names.map((name) => objects.entry(dir, commit, name)));
    const bodies = await Promise.all(entries.map((entry) => objects.blob(dir, entry!.oid)));
    expect(bodies.map((body) => body!.toString())).toEqual(names.map((_, index) => `file ${index}\n`));
    // Callers arriving together shared the readers: at most READERS_PER_REPOSITORY were started.
    expect(pool.runningCount).toBeLessThanOrEqual(READERS_PER_REPOSITORY);
  });

  it('asks a new reader again when the one it used stopped under the request', async () => {
    const { dir, commit } = await makeRepository('retried');
    const { pool, objects } = setUp();
    const first = await pool.reader(dir);
    const reading = objects.entry(dir, commit, 'a.txt');
    // Stopped once the requests are written: they fail with ReaderStoppedError (unless git answered first), and
    // the read asks a new reader; either way the answer is right.
    while (first.pendingCount === 0) await new Promise((resolve) => setImmediate(resolve));
    first.kill();
    expect((await reading)?.size).toBe(6);
    await expect(first.info('HEAD')).rejects.toBeInstanceOf(ReaderStoppedError);
  });

  it('replaces a reader that was killed; what was in flight fails with GitError', async () => {
    const { dir, commit } = await makeRepository('killed');
    const { pool, objects } = setUp();
    const first = await pool.reader(dir);
    const inFlight = first.info(`${commit}:a.txt`);
    first.kill();
    await first.exited;
    // Either answered before the kill or failed by it; never hangs, never a wrong answer.
    const outcome = await inFlight.then(
      (answer) => answer?.type,
      (error: unknown) => error,
    );
    if (outcome !== 'blob') expect(outcome).toBeInstanceOf(GitError);
    const second = await pool.reader(dir);
    expect(second).not.toBe(first);
    expect((await objects.entry(dir, commit, 'a.txt'))?.size).toBe(6);
  });

  it('forgets the readers of a repository moved or deleted on disk: later reads get a new one', async () => {
    const { dir } = await makeRepository('forgotten');
    const { pool } = setUp();
    const first = await pool.reader(dir);
    pool.forget(dir);
    await first.exited;
    const second = await pool.reader(dir);
    expect(second).not.toBe(first);
    expect((await second.info('refs/heads/main'))?.type).toBe('commit');
  });

  it('stops readers idle for READER_IDLE_MS (on the pool clock), not sooner', async () => {
    const { dir } = await makeRepository('idle');
    const { pool } = setUp();
    let now = 1_000_000;
    pool.now = () => now;
    const reader = await pool.reader(dir);
    await reader.info('HEAD');
    now += READER_IDLE_MS - 1;
    expect(pool.reapIdle()).toBe(0);
    now += 1;
    expect(pool.reapIdle()).toBe(1);
    await reader.exited;
    expect(pool.runningCount).toBe(0);
  });

  it('keeps readers within the process cap: an idle reader gives its slot to a command that wants one', async () => {
    const { dir } = await makeRepository('cap');
    const { pool, processes } = setUp(1);
    let now = 1_000_000;
    pool.now = () => now;
    const reader = await pool.reader(dir);
    await reader.info('HEAD');
    // Unused long enough to give way (a reader in steady use is not stopped and started again each time).
    now += RECLAIM_AFTER_MS;
    const order: string[] = [];
    await processes.withSlot(async () => {
      order.push('command');
    });
    await reader.exited;
    order.push('reader gone');
    expect(order).toEqual(['command', 'reader gone']);
    expect(reader.usable).toBe(false);
    // With one slot, a reader for another repository waits for that command, then runs.
    const other = await makeRepository('cap-other');
    const next = await pool.reader(other.dir);
    expect((await next.info('refs/heads/main'))?.type).toBe('commit');
    expect(pool.runningCount).toBe(1);
  });

  it('fails every request in flight with GitTimeoutError when git does not answer in time, and stops', async () => {
    // A stand-in that reads requests and never answers.
    const child = spawn('sleep', ['30'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const reader = new BatchReader(child, 50);
    const answers = [reader.info('a'), reader.contents('b')].map((request) => request.catch((error: unknown) => error));
    expect(await answers[0]).toBeInstanceOf(GitTimeoutError);
    expect(await answers[1]).toBeInstanceOf(GitTimeoutError);
    await reader.exited;
    expect(reader.usable).toBe(false);
  });

  it("gives each request its own time: one answered in time does not shorten the next one's", async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      const { child } = standInGit();
      const reader = new BatchReader(child, 1000);
      const first = reader.info('a');
      jest.advanceTimersByTime(600);
      const second = reader.info('b').catch((error: unknown) => error);
      child.stdout.write(`${'1'.repeat(40)} blob 3\n`);
      expect((await first)?.oid).toBe('1'.repeat(40));
      // The first one's time is up, the second's is not: it is still waiting, the process still running.
      jest.advanceTimersByTime(600);
      await new Promise((resolve) => setImmediate(resolve));
      expect(child.kill).not.toHaveBeenCalled();
      expect(reader.pendingCount).toBe(1);
      // Its own time up, it fails with every request in flight, and the process goes.
      jest.advanceTimersByTime(500);
      expect(await second).toBeInstanceOf(GitTimeoutError);
      expect(child.kill).toHaveBeenCalled();
    } finally {
      jest.useRealTimers();
    }
  });

  it('answers a request of several objects in one, in order, however git cuts its answer into chunks', async () => {
    // The stand-in's answers are written one byte at a time, then all at once.
    const [a, b, c] = ['a', 'b', 'c'].map((digit) => digit.repeat(40));
    const big = Buffer.alloc(70_000, 0x61);
    const answer = Buffer.concat([
      Buffer.from(`${a} tree 3\nxyz\n`),
      Buffer.from(`${b} missing\n`),
      Buffer.from(`${c} blob ${big.length}\n`),
      big,
      Buffer.from('\n'),
    ]);
    for (const pieces of [[...answer].map((byte) => Buffer.from([byte])), [answer]]) {
      const { child, written } = standInGit();
      const reader = new BatchReader(child, 60_000);
      const objects = reader.contentsOf([a, b, c]);
      const after = reader.info(a);
      for (const piece of pieces) child.stdout.write(piece);
      child.stdout.write(`${a} tree 3\n`);
      const [tree, missing, blob] = await objects;
      expect(tree).toEqual({ oid: a, type: 'tree', size: 3, content: Buffer.from('xyz') });
      expect(missing).toBeNull();
      expect(blob?.content?.equals(big)).toBe(true);
      expect(await after).toEqual({ oid: a, type: 'tree', size: 3 });
      // One write of the three requests and its flush, then the single request and its own.
      await new Promise((resolve) => setImmediate(resolve));
      expect(Buffer.concat(written).toString()).toBe(`contents ${a}\ncontents ${b}\ncontents ${c}\nflush\ninfo ${a}\nflush\n`);
      expect(reader.pendingCount).toBe(0);
    }
    const reader = new BatchReader(standInGit().child, 60_000);
    await expect(reader.contentsOf([a, 'b\nc'])).rejects.toBeInstanceOf(GitError);
    expect(await reader.contentsOf([])).toEqual([]);
  });

  it('refuses object names it cannot write on one line', async () => {
    const { dir } = await makeRepository('names');
    const { pool } = setUp();
    const reader = await pool.reader(dir);
    await expect(reader.info('a\nb')).rejects.toBeInstanceOf(GitError);
    await expect(reader.info('')).rejects.toBeInstanceOf(GitError);
    expect((await reader.info('refs/heads/main'))?.type).toBe('commit');
  });

  describe('GitObjects: what objects determine is remembered, refs are read afresh', () => {
    /** A second commit on top of `parent` whose a.txt says `text`. */
    async function nextCommit(git: GitCommand, dir: string, parent: string, text: string): Promise<string> {
      const blob = (await git.run(['hash-object', '-w', '--stdin'], { gitDir: dir, input: text })).trim();
      const tree = (await git.run(['mktree'], { gitDir: dir, input: `100644 blob ${blob}\ta.txt\n` })).trim();
      const env = { GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com' };
      return (await git.run(['commit-tree', tree, '-p', parent, '-m', text], { gitDir: dir, env })).trim();
    }

    it('answers a second read of an entry, a blob and a ref from memory, without asking a reader', async () => {
      const { dir, commit } = await makeRepository('remembered');
      const { pool, objects } = setUp();
      const asked = jest.spyOn(pool, 'reader');
      const first = await objects.entry(dir, commit, 'dir/b.txt');
      expect((await objects.blob(dir, first!.oid))!.toString()).toBe('beta\n');
      expect(await objects.peelFirst(dir, ['refs/heads/main', 'refs/tags/main'])).toEqual({ ref: 'refs/heads/main', commit });
      expect(await objects.entry(dir, commit, 'dir/missing.txt')).toBeNull();
      const calls = asked.mock.calls.length;
      expect(calls).toBeGreaterThan(0);
      expect(await objects.entry(dir, commit, 'dir/b.txt')).toEqual(first);
      expect((await objects.blob(dir, first!.oid))!.toString()).toBe('beta\n');
      expect(await objects.peelFirst(dir, ['refs/heads/main', 'refs/tags/main'])).toEqual({ ref: 'refs/heads/main', commit });
      expect(await objects.entry(dir, commit, 'dir/missing.txt')).toBeNull();
      expect(asked.mock.calls.length).toBe(calls);
      // A caller changing the entry it got does not change what the next caller gets.
      (await objects.entry(dir, commit, 'dir/b.txt'))!.size = 99;
      expect((await objects.entry(dir, commit, 'dir/b.txt'))!.size).toBe(5);
    });

    it('learns the other entries of a directory it read, in the background, as they would be read one by one', async () => {
      const { dir, commit } = await makeRepository('siblings', 5);
      const { pool, objects } = setUp();
      const asked = jest.spyOn(pool, 'reader');
      await objects.entry(dir, commit, 'n0.txt');
      await objects.entry(dir, commit, 'dir/b.txt');
      // Wait for the background reads to be answered and filed.
      await objects.learning();
      const calls = asked.mock.calls.length;
      const names = ['n1.txt', 'n4.txt', 'a.txt', 'link', 'run.sh', 'dir', 'dir/missing.txt'];
      const learned = await Promise.all(names.map((name) => objects.entry(dir, commit, name)));
      // Only the missing file needed git; the rest equal what a fresh reader reads one by one.
      expect(asked.mock.calls.length).toBe(calls + 1);
      const { objects: fresh } = setUp();
      expect(learned).toEqual(await Promise.all(names.map((name) => fresh.entry(dir, commit, name))));
      expect(learned[0]).toMatchObject({ size: 7, type: 'blob', mode: '100644', path: 'n1.txt' });
    });

    it('sees every change of a ref at once: loose, packed, symbolic, deleted', async () => {
      const { dir, commit } = await makeRepository('moving');
      const { objects, git } = setUp();
      const peel = async (ref: string) => (await objects.peelRefs(dir, [ref])).get(ref);
      expect(await peel('refs/heads/main')).toBe(commit);
      // Other spellings of a ref's path are no ref names (git refuses them; they would reach the same file).
      for (const spelling of ['refs/heads/./main', 'refs/heads//main', 'refs/heads/main/', 'refs/heads/.main', 'refs/heads/main.lock']) {
        expect(await peel(spelling)).toBeUndefined();
      }
      const second = await nextCommit(git, dir, commit, 'second\n');
      await git.run(['update-ref', 'refs/heads/main', second], { gitDir: dir });
      expect(await peel('refs/heads/main')).toBe(second);
      // Packed: the loose file goes, packed-refs holds the value; then a new loose value wins over the packed one.
      await git.run(['pack-refs', '--all'], { gitDir: dir });
      expect(fs.existsSync(path.join(dir, 'refs/heads/main'))).toBe(false);
      expect(await peel('refs/heads/main')).toBe(second);
      await git.run(['update-ref', 'refs/heads/main', commit], { gitDir: dir });
      expect(await peel('refs/heads/main')).toBe(commit);
      // A symbolic ref is resolved by git; a tag is peeled to its commit.
      await git.run(['symbolic-ref', 'refs/heads/alias', 'refs/heads/main'], { gitDir: dir });
      expect(await peel('refs/heads/alias')).toBe(commit);
      await git.run(['tag', '-a', '-m', 'annotated', 'v1', second], { gitDir: dir, env: { GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com' } });
      expect(await peel('refs/tags/v1')).toBe(second);
      // A branch wins over a tag of the same name; without the branch, the tag answers.
      await git.run(['update-ref', 'refs/tags/main', second], { gitDir: dir });
      expect(await objects.peelFirst(dir, ['refs/heads/main', 'refs/tags/main'])).toEqual({ ref: 'refs/heads/main', commit });
      await git.run(['update-ref', '-d', 'refs/heads/main'], { gitDir: dir });
      expect(await peel('refs/heads/main')).toBeUndefined();
      expect(await objects.peelFirst(dir, ['refs/heads/main', 'refs/tags/main'])).toEqual({ ref: 'refs/tags/main', commit: second });
      // A tag of a blob names no commit (asked twice: the second answer comes from memory).
      const blob = (await git.run(['hash-object', '-w', '--stdin'], { gitDir: dir, input: 'not a commit' })).trim();
      await git.run(['update-ref', 'refs/tags/blob', blob], { gitDir: dir });
      expect(await peel('refs/tags/blob')).toBeUndefined();
      expect(await peel('refs/tags/blob')).toBeUndefined();
    });

    it('keeps a loose ref value only while the file stat stands: a rename over it or an in-place rewrite is read again', async () => {
      const { dir, commit } = await makeRepository('stamped');
      const { objects, git } = setUp();
      const file = path.join(dir, 'refs/heads/main');
      const peel = async () => (await objects.peelRefs(dir, ['refs/heads/main'])).get('refs/heads/main');
      // Long after every write (the clock moved on), so values are kept by their stat.
      objects.now = () => Date.now() + 60_000;
      const stamp = Math.floor(Date.now() / 1000) - 10;
      fs.utimesSync(file, stamp, stamp);
      expect(await peel()).toBe(commit);
      // git renames a new file over it.
      const second = await nextCommit(git, dir, commit, 'stamped\n');
      await git.run(['update-ref', 'refs/heads/main', second], { gitDir: dir });
      expect(await peel()).toBe(second);
      // Rewritten in place with the same size, inode and modification time: only the change time tells.
      fs.utimesSync(file, stamp, stamp);
      expect(await peel()).toBe(second);
      const before = fs.statSync(file);
      fs.writeFileSync(file, `${commit}\n`);
      fs.utimesSync(file, stamp, stamp);
      const after = fs.statSync(file);
      expect([after.ino, after.size, after.mtimeMs]).toEqual([before.ino, before.size, before.mtimeMs]);
      expect(await peel()).toBe(commit);
    });

    it('reads packed-refs again when it was written too recently for its stat to tell a rewrite apart', async () => {
      const { dir, commit } = await makeRepository('racy');
      const { objects, git } = setUp();
      const second = await nextCommit(git, dir, commit, 'racy\n');
      await git.run(['pack-refs', '--all'], { gitDir: dir });
      const file = path.join(dir, 'packed-refs');
      // A whole second, which utimes can set again exactly.
      const stamp = Math.floor(Date.now() / 1000);
      fs.utimesSync(file, stamp, stamp);
      const before = fs.statSync(file);
      objects.now = () => before.mtimeMs + 1_000;
      expect((await objects.peelRefs(dir, ['refs/heads/main'])).get('refs/heads/main')).toBe(commit);
      // Rewritten in place within the same timestamp: same inode, size and modification time.
      fs.writeFileSync(file, fs.readFileSync(file, 'latin1').replace(commit, second));
      fs.utimesSync(file, stamp, stamp);
      const after = fs.statSync(file);
      expect([after.ino, after.size, after.mtimeMs]).toEqual([before.ino, before.size, before.mtimeMs]);
      expect((await objects.peelRefs(dir, ['refs/heads/main'])).get('refs/heads/main')).toBe(second);
    });
  });
});
