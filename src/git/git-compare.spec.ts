import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AppConfig } from '../config/config';
import { GitCommand } from './git-command';
import { GitCommits } from './git-commits';
import { GitCompare } from './git-compare';
import { GitLauncher } from './git-launcher';
import { RepositoryPaths } from './repository-paths';

describe('GitCompare: test merges', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-git-compare-'));
  const launcher = new GitLauncher();
  const config = { dataDir } as AppConfig;
  const git = new GitCommand(config, {} as AppConfig['git'], launcher);
  const compare = new GitCompare(git, {} as GitCommits, new RepositoryPaths(config));
  const bare = path.join(dataDir, 'repo.git');
  const work = path.join(dataDir, 'work');
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dataDir,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Ann',
    GIT_AUTHOR_EMAIL: 'ann@example.com',
    GIT_COMMITTER_NAME: 'Ann',
    GIT_COMMITTER_EMAIL: 'ann@example.com',
  };
  const sh = (...args: string[]) => execFileSync('git', args, { cwd: work, env, encoding: 'utf8' }).trim();
  /** Every object file of the repository, loose or packed. */
  const objectFiles = () => (fs.readdirSync(path.join(bare, 'objects'), { recursive: true }) as string[]).sort();

  beforeAll(() => {
    fs.mkdirSync(work);
    sh('init', '--quiet', '--initial-branch=main');
    fs.writeFileSync(path.join(work, 'a.txt'), 'one\ntwo\n');
    sh('add', '.');
    sh('commit', '--quiet', '-m', 'base');
    sh('checkout', '--quiet', '-b', 'topic');
    fs.writeFileSync(path.join(work, 'b.txt'), 'topic\n');
    sh('add', '.');
    sh('commit', '--quiet', '-m', 'topic');
    sh('checkout', '--quiet', 'main');
    fs.writeFileSync(path.join(work, 'c.txt'), 'main\n');
    sh('add', '.');
    sh('commit', '--quiet', '-m', 'main moves on');
    sh('checkout', '--quiet', '-b', 'clash', 'topic');
    fs.writeFileSync(path.join(work, 'c.txt'), 'clash\n');
    sh('add', '.');
    sh('commit', '--quiet', '-m', 'clash');
    execFileSync('git', ['clone', '--quiet', '--bare', work, bare], { env });
  });
  afterAll(() => {
    launcher.onApplicationShutdown();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers the merged tree git makes, and leaves no object in the repository', async () => {
    const before = objectFiles();
    const merge = await compare.testMerge(bare, 'refs/heads/main', 'refs/heads/topic');
    expect(merge.conflicts).toEqual([]);
    // The tree `git merge` makes in a work tree.
    sh('checkout', '--quiet', 'main');
    sh('merge', '--quiet', '--no-edit', 'topic');
    expect(merge.tree).toBe(sh('rev-parse', 'HEAD^{tree}'));
    expect(objectFiles()).toEqual(before);
    // The scratch object directory went with the test.
    expect(fs.readdirSync(new RepositoryPaths(config).gitIndexes())).toEqual([]);
  });

  it('names the conflicting paths, again without writing into the repository', async () => {
    const before = objectFiles();
    const merge = await compare.testMerge(bare, 'refs/heads/main', 'refs/heads/clash');
    expect(merge.conflicts).toEqual(['c.txt']);
    expect(merge.tree).toMatch(/^[0-9a-f]{40}$/);
    expect(objectFiles()).toEqual(before);
  });
});
