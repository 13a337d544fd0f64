import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface GitOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The real git client, run asynchronously (the server under test lives in the same process), with a clean
 * environment: no user or system configuration, no prompts, and a fixed identity so that no machine needs one.
 */
export class GitClient {
  readonly home: string;

  constructor(private readonly extraEnv: Record<string, string> = {}) {
    this.home = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-git-client-'));
  }

  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: this.home,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_TERMINAL_PROMPT: '0',
      GIT_AUTHOR_NAME: 'Test Author',
      GIT_AUTHOR_EMAIL: 'author@example.com',
      GIT_COMMITTER_NAME: 'Test Author',
      GIT_COMMITTER_EMAIL: 'author@example.com',
      LC_ALL: 'C',
      ...this.extraEnv,
      ...extra,
    };
  }

  /** Runs git; never throws on a non-zero exit (tests assert on the outcome). */
  run(args: string[], options: { cwd?: string; env?: Record<string, string>; input?: string } = {}): Promise<GitOutcome> {
    return new Promise((resolve, reject) => {
      const child = spawn('git', args, { cwd: options.cwd ?? this.home, env: this.env(options.env), stdio: ['pipe', 'pipe', 'pipe'] });
      const stdout: Buffer[] = [];
      const stderr: Buffer[] = [];
      child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
      child.on('error', reject);
      child.on('close', (code) => {
        resolve({ code: code ?? -1, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') });
      });
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.input ?? '');
    });
  }

  /** Like run, but a non-zero exit fails the test with git's output. */
  async ok(args: string[], options: { cwd?: string; env?: Record<string, string>; input?: string } = {}): Promise<string> {
    const outcome = await this.run(args, options);
    if (outcome.code !== 0) throw new Error(`git ${args.join(' ')} exited ${outcome.code}:\n${outcome.stderr}`);
    return outcome.stdout;
  }

  /** A fresh working copy with one commit per entry of `files` on `branch`. */
  async workingCopy(branch = 'main', files: Record<string, string> = { 'README.md': 'hello\n' }): Promise<string> {
    const dir = fs.mkdtempSync(path.join(this.home, 'work-'));
    await this.ok(['init', '--quiet', '--initial-branch', branch, dir]);
    for (const [name, content] of Object.entries(files)) {
      fs.writeFileSync(path.join(dir, name), content);
      await this.ok(['add', name], { cwd: dir });
      await this.ok(['commit', '--quiet', '-m', `add ${name}`], { cwd: dir });
    }
    return dir;
  }

  dispose(): void {
    fs.rmSync(this.home, { recursive: true, force: true });
  }
}

/** `http://user:secret@host:port/path` with both parts URL-encoded. */
export function withCredentials(baseUrl: string, repoPath: string, user?: string, secret?: string): string {
  const url = new URL(repoPath, baseUrl);
  if (user !== undefined) url.username = encodeURIComponent(user);
  if (secret !== undefined) url.password = encodeURIComponent(secret);
  return url.toString();
}
