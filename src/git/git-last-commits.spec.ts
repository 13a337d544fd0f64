import * as fs from 'node:fs';
import { PassThrough } from 'node:stream';
import * as os from 'node:os';
import * as path from 'node:path';
import { AppConfig } from '../config/config';
import { GitCommand } from './git-command';
import { GitLastCommits } from './git-last-commits';
import { GitLauncher } from './git-launcher';
import { GitProcesses } from './git-processes';
import { GitTreeBudget } from './git-tree-budget';
import { GitTrees } from './git-trees';
import type { PushHooks } from './push-hooks';

describe('GitLastCommits: the last commit of a path, remembered and learnt by one walk', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-last-commits-'));
  const launcher = new GitLauncher();
  const config = { dataDir, git: { maxProcesses: 4, queueTimeoutMs: 30_000, idleTimeoutMs: 600_000, drainTimeoutMs: 1_000 } } as AppConfig;
  const git = new GitCommand(config, config.git, launcher);
  const budget = new GitTreeBudget(git, config.git);
  const trees = new GitTrees(git, budget);
  const env = { GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com' };
  const dir = path.join(dataDir, 'r.git');

  /** A commit of `files` (path to text) with the given parents. */
  async function commit(files: Record<string, string>, parents: string[], message: string): Promise<string> {
    const index = path.join(dataDir, 'index');
    fs.rmSync(index, { force: true });
    const indexEnv = { GIT_INDEX_FILE: index };
    for (const [file, text] of Object.entries(files)) {
      const blob = (await git.run(['hash-object', '-w', '--stdin'], { gitDir: dir, input: text })).trim();
      await git.run(['update-index', '--add', '--cacheinfo', `100644,${blob},${file}`], { gitDir: dir, env: indexEnv });
    }
    const tree = (await git.run(['write-tree'], { gitDir: dir, env: indexEnv })).trim();
    return (await git.run(['commit-tree', tree, ...parents.flatMap((parent) => ['-p', parent]), '-m', message], { gitDir: dir, env })).trim();
  }

  afterAll(() => {
    launcher.onApplicationShutdown();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('learns files changed along single-parent history, stops at a merge, and answers the rest as git log does', async () => {
    await git.run(['init', '--bare', '--quiet', dir]);
    const base = await commit({ 'kept.txt': 'kept\n', 'side.txt': 'base\n' }, [], 'base');
    const side = await commit({ 'kept.txt': 'kept\n', 'side.txt': 'side\n' }, [base], 'side change');
    const main = await commit({ 'kept.txt': 'kept\n', 'side.txt': 'base\n', 'main.txt': 'main\n' }, [base], 'main change');
    const merge = await commit({ 'kept.txt': 'kept\n', 'side.txt': 'side\n', 'main.txt': 'main\n' }, [main, side], 'merge');
    const head = await commit({ 'kept.txt': 'kept\n', 'side.txt': 'side\n', 'main.txt': 'main\n', 'top.txt': 'top\n' }, [merge], 'top');
    const lastCommits = new GitLastCommits(trees, git, new GitProcesses(config, config.git, {} as PushHooks, launcher), budget);

    await lastCommits.walk(dir, head);
    expect(lastCommits.cached(dir, head, 'top.txt')).toBe(head);
    // The merge changed side.txt against its first parent, but git log -1 -- side.txt follows the side branch:
    // the walk stopped there, leaving it (and everything older) to be asked.
    expect(lastCommits.cached(dir, head, 'side.txt')).toBeUndefined();
    expect(lastCommits.cached(dir, head, 'kept.txt')).toBeUndefined();
    expect(await lastCommits.find(dir, head, 'side.txt')).toBe(side);
    expect(await lastCommits.find(dir, head, 'kept.txt')).toBe(base);
    expect(lastCommits.cached(dir, head, 'side.txt')).toBe(side);

    // Along single-parent history the walk learns every file, the first commit's too.
    await lastCommits.walk(dir, main);
    expect(lastCommits.cached(dir, main, 'main.txt')).toBe(main);
    expect(lastCommits.cached(dir, main, 'kept.txt')).toBe(base);
    for (const file of ['main.txt', 'kept.txt', 'side.txt']) {
      expect(lastCommits.cached(dir, main, file)).toBe(await trees.lastCommit(dir, main, file));
    }
  });

  it('answers a caller waiting for its path as soon as the walk reaches it, before the walk ends', async () => {
    // git's output fed by hand: the walk is still running when the first path's answer is known.
    const output = new PassThrough();
    let exit!: () => void;
    const exited = new Promise<void>((resolve) => (exit = resolve));
    const fakeGit = { stream: () => ({ stdout: output, exited, kill: () => output.end() }) } as unknown as GitCommand;
    const lastCommits = new GitLastCommits(trees, fakeGit, new GitProcesses(config, config.git, {} as PushHooks, launcher), budget);
    const [c1, c2, head] = ['1'.repeat(40), '2'.repeat(40), 'f'.repeat(40)];
    let walkEnded = false;
    void lastCommits.walk(dir, head).then(() => (walkEnded = true));
    const early = lastCommits.learned(dir, head, 'b.txt', 60_000);
    const later = lastCommits.learned(dir, head, 'old.txt', 60_000);
    const never = lastCommits.learned(dir, head, 'missing.txt', 60_000);
    output.write(`\x01${c1} ${c2}\0\na.txt\0b.txt\0`);
    expect(await early).toBe(c1);
    expect(walkEnded).toBe(false);
    output.write(`\x01${c2}\0\nold.txt\0`);
    expect(await later).toBe(c2);
    expect(walkEnded).toBe(false);
    // The walk ends without the path: undefined, for the caller to ask git.
    output.end();
    exit();
    expect(await never).toBeUndefined();
    expect(walkEnded).toBe(true);
    // A known answer comes at once, whatever the wait.
    expect(await lastCommits.learned(dir, head, 'a.txt', 0)).toBe(c1);
  });
});
