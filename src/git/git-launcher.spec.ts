import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AppConfig } from '../config/config';
import type { GitConfig } from '../config/slices';
import { GitAbortedError, GitCommand, GitError, GitTimeoutError } from './git-command';
import { GitLauncher } from './git-launcher';

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
});
