import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { GitCommand, GitRunOptions } from './git-command';
import { GitRemotes, RemoteTooLargeError } from './git-remotes';

const IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };

function git(args: string[], cwd?: string): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...IDENTITY } }).trim();
}

/** git as GitCommand runs it, without the launcher: `--git-dir`, extra variables, standard input. */
function runGit(args: string[], options: GitRunOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...(options.gitDir ? [`--git-dir=${options.gitDir}`] : []), ...args], { env: { ...process.env, ...IDENTITY, ...options.env } });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('error', reject);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // 'close', not 'exit': on a busy machine git's output can still be in the pipe when it has exited, and an
    // empty `for-each-ref` would make the undo delete every ref.
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`git ${args.join(' ')} exited ${code}: ${stderr}`))));
    // A command that reads nothing may have exited before its (empty) input is written.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

describe('GitRemotes.fetchMirror under a byte budget', () => {
  let root: string;

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-remotes-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('puts the refs back when the fetch is stopped after its ref transaction committed', async () => {
    const work = path.join(root, 'work');
    git(['init', '--quiet', '-b', 'main', work]);
    fs.writeFileSync(path.join(work, 'README.md'), 'small\n');
    git(['add', '.'], work);
    git(['commit', '--quiet', '-m', 'first'], work);
    const mirror = path.join(root, 'mirror.git');
    git(['clone', '--quiet', '--mirror', work, mirror]);
    const before = git(['--git-dir', mirror, 'rev-parse', 'refs/heads/main']);
    fs.writeFileSync(path.join(work, 'noise.bin'), randomBytes(2 * 1024 * 1024));
    git(['add', '.'], work);
    git(['commit', '--quiet', '-m', 'noise'], work);

    // git finishes the whole fetch (pack written, refs moved), then is stopped by the budget's abort before it
    // exits, as a fetch is when the measurement lands between its ref update and its end.
    const command = {
      run: async (args: string[], options: GitRunOptions) => {
        if (!args.includes('fetch')) return runGit(args, options);
        await runGit(args, { ...options, env: { ...options.env, GIT_ALLOW_PROTOCOL: 'file' }, signal: undefined });
        // The budget may have stopped it already while git was still writing (a slow machine).
        if (!options.signal!.aborted) await new Promise((resolve) => options.signal!.addEventListener('abort', resolve, { once: true }));
        throw new Error('git fetch was stopped');
      },
    } as unknown as GitCommand;
    const remotes = new GitRemotes(command);

    await expect(remotes.fetchMirror(mirror, { timeoutMs: 60_000, maxBytes: 64 * 1024 })).rejects.toThrow(RemoteTooLargeError);
    expect(git(['--git-dir', mirror, 'rev-parse', 'refs/heads/main'])).toBe(before);
    expect(() => git(['--git-dir', mirror, 'fsck', '--full', '--no-progress'])).not.toThrow();
  });
});
