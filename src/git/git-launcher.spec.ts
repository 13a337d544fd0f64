import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AppConfig } from '../config/config';
import type { GitConfig } from '../config/slices';
import { runInBackground } from './git-client';
import { GitAbortedError, GitCommand, GitError, GitOutputTooLargeError, GitTimeoutError } from './git-command';
import { GitLauncher, LaunchedProcess } from './git-launcher';

describe('GitCommand through the launcher process', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-launcher-'));
  const launcher = new GitLauncher();
  const git = new GitCommand({ dataDir } as AppConfig, {} as GitConfig, launcher);
  afterAll(() => {
    launcher.onApplicationShutdown();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs git with its input and answers its output, as a local spawn does', async () => {
    const dir = path.join(dataDir, 'r.git');
    await git.run(['init', '--bare', '--quiet', dir], { offload: true });
    const oid = (await git.run(['hash-object', '-w', '--stdin'], { gitDir: dir, input: 'hello\n', offload: true })).trim();
    expect(oid).toBe((await git.run(['hash-object', '--stdin'], { input: 'hello\n' })).trim());
    expect(await git.run(['cat-file', '-p', oid], { gitDir: dir, offload: true })).toBe('hello\n');
  });

  it('reports a failing command with its exit code and stderr', async () => {
    const error = await git.run(['cat-file', '-p', 'no-such-object'], { gitDir: path.join(dataDir, 'r.git'), offload: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitError);
    expect((error as GitError).exitCode).toBe(128);
    expect((error as GitError).stderr).toMatch(/fatal/);
    expect((await git.probe(['show-ref', '--verify', '--quiet', 'refs/heads/x'], { gitDir: path.join(dataDir, 'r.git'), offload: true })).exitCode).toBe(1);
  });

  it('kills a command that outlives its time limit, or is stopped', async () => {
    // A shell alias that sleeps: git's child must go with it (process group).
    const forever = ['-c', 'alias.wait=!sleep 30', 'wait'];
    await expect(git.run(forever, { offload: true, processGroup: true, timeoutMs: 300 })).rejects.toBeInstanceOf(GitTimeoutError);
    const controller = new AbortController();
    const running = git.run(forever, { offload: true, processGroup: true, signal: controller.signal, timeoutMs: 60_000 });
    controller.abort();
    await expect(running).rejects.toBeInstanceOf(GitAbortedError);
  });

  it('fails a command that writes more than an answer may hold, spawned here or by the launcher', async () => {
    // 17 000 000 bytes, one more megabyte than the 16 MiB cap: once cut short silently.
    const big = ['-c', 'alias.big=!head -c 17000000 /dev/zero', 'big'];
    await expect(git.run(big)).rejects.toBeInstanceOf(GitOutputTooLargeError);
    await expect(git.run(big, { offload: true })).rejects.toBeInstanceOf(GitOutputTooLargeError);
    // Just under the cap, whole.
    const under = ['-c', `alias.under=!head -c ${16 * 1024 * 1024} /dev/zero`, 'under'];
    expect((await git.runBuffer(under)).length).toBe(16 * 1024 * 1024);
    expect((await git.runBuffer(under, { offload: true })).length).toBe(16 * 1024 * 1024);
  });

  it("runs background work's git at a lower priority than a request's", async () => {
    // The alias's shell reads git's nice value (field 19 of its stat) once git has been lowered.
    const niceOfGit = ['-c', 'alias.nice=!sleep 0.3; cut -d" " -f19 /proc/$PPID/stat', 'nice'];
    const foreground = Number(await git.run(niceOfGit));
    const background = Number(await runInBackground(() => git.run(niceOfGit)));
    expect(background).toBe(Math.min(19, foreground + 10));
  });
});

describe('gits the launcher starts for the server to stream', () => {
  const launcher = new GitLauncher();
  afterAll(() => launcher.onApplicationShutdown());

  const collect = (stream: NodeJS.ReadableStream) =>
    new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });

  const ended = (child: LaunchedProcess) => {
    const events: string[] = [];
    child.on('exit', (code: number | null, signal: string | null) => events.push(`exit ${code} ${signal}`));
    return new Promise<string[]>((resolve) =>
      child.on('close', (code: number | null, signal: string | null) => resolve([...events, `close ${code} ${signal}`])),
    );
  };

  it('hands over the pipes of a running git: input in, output and errors out, then exit before close', async () => {
    const child = await launcher.start({ args: ['hash-object', '--stdin'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, processGroup: false });
    expect(child.pid).toBeGreaterThan(0);
    const output = collect(child.stdout);
    const events = ended(child);
    child.stdin.end('hello\n');
    expect((await output).trim()).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
    expect(await events).toEqual(['exit 0 null', 'close 0 null']);
    expect(child.exitCode).toBe(0);

    const failing = await launcher.start({
      args: ['cat-file', '-p', 'no-such-object'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      processGroup: false,
    });
    const errors = collect(failing.stderr);
    failing.stdout.resume();
    expect(await ended(failing)).toEqual(['exit 128 null', 'close 128 null']);
    expect(await errors).toMatch(/fatal/);
  });

  it('rejects a program that cannot be started, with its code', async () => {
    await expect(launcher.start({ file: '/nonexistent/git', args: [], env: {}, processGroup: false })).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('stops a git that still runs when the launcher goes away, and reports it killed', async () => {
    const own = new GitLauncher();
    const child = await own.start({ args: ['-c', 'alias.wait=!sleep 30', 'wait'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, processGroup: true });
    child.stdout.resume();
    child.stderr.resume();
    const events = ended(child);
    own.onApplicationShutdown();
    expect(await events).toEqual(['exit null SIGKILL', 'close null SIGKILL']);
    // The whole group went (once its zombies are reaped, no process of it is left to signal).
    const groupGone = async () => {
      for (let tries = 0; tries < 200; tries++) {
        try {
          process.kill(-(child.pid as number), 0);
        } catch {
          return true;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return false;
    };
    expect(await groupGone()).toBe(true);
  });
});
