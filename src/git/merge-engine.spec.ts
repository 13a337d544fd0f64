import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AppConfig } from '../config/config';
import { GitCommand } from './git-command';
import { GitLauncher } from './git-launcher';
import { GitWrites, RefChangedError } from './git-writes';
import type { RepositoryPaths } from './repository-paths';
import { commitMessage, GitMerges, MergePlan } from './merge-engine';
import { DivergingFastForwardError, MergeConflictError, NothingToMergeError, RebaseConflictError, UnrelatedHistoriesError } from './merge-errors';

/**
 * Each style is checked against what git itself makes of the same merge in a clone with a work tree, the way
 * Forgejo merges (`merge --no-ff --no-commit` + `commit -m`, `merge --squash` + `commit --author`, `rebase` +
 * `merge --ff-only`): equal commit ids mean equal trees, parents, authors, committers, dates and messages.
 */
describe('GitMerges: pull request merges built with plumbing in the bare repository', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-merge-engine-'));
  const launcher = new GitLauncher();
  const config = { dataDir, git: { maxProcesses: 8, queueTimeoutMs: 30_000, idleTimeoutMs: 600_000, drainTimeoutMs: 1_000 } } as AppConfig;
  const git = new GitCommand(config, config.git, launcher);
  const merges = new GitMerges(git);
  const bare = path.join(dataDir, 'repo.git');
  const work = path.join(dataDir, 'work');
  const NOW = 1_700_000_000;
  const merger = { name: 'Mia Merger', email: 'mia@example.com', whenUnix: NOW };
  const poster = { name: 'Pat Poster', email: 'pat@example.com', whenUnix: 0 };
  const baseEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dataDir,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    LC_ALL: 'C',
  };
  /** Commits of the fixtures: their own author, at a time of their own, in a zone of their own. */
  const authorEnv = (who: string, when: string) => ({
    ...baseEnv,
    GIT_AUTHOR_NAME: who,
    GIT_AUTHOR_EMAIL: `${who.toLowerCase()}@example.com`,
    GIT_AUTHOR_DATE: when,
    GIT_COMMITTER_NAME: who,
    GIT_COMMITTER_EMAIL: `${who.toLowerCase()}@example.com`,
    GIT_COMMITTER_DATE: when,
  });
  /** The merge as Forgejo's clone runs it: the merger as author and committer, dated now. */
  const mergerEnv = {
    ...baseEnv,
    GIT_AUTHOR_NAME: merger.name,
    GIT_AUTHOR_EMAIL: merger.email,
    GIT_AUTHOR_DATE: `@${NOW} +0000`,
    GIT_COMMITTER_NAME: merger.name,
    GIT_COMMITTER_EMAIL: merger.email,
    GIT_COMMITTER_DATE: `@${NOW} +0000`,
  };
  const inWork = (env: Record<string, string>, ...args: string[]): string => execFileSync('git', args, { cwd: work, env, encoding: 'utf8' }).trim();
  const sh = (...args: string[]) => inWork(authorEnv('Ann', '@1600000000 +0200'), ...args);
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
    fs.writeFileSync(path.join(work, file), text);
  };
  let counter = 0;
  const commit = (message: string, who = 'Ann', files: Record<string, string> = {}, allowEmpty = false): string => {
    for (const [file, text] of Object.entries(files)) write(file, text);
    counter += 1;
    const env = authorEnv(who, `@${1_600_000_000 + counter * 60} ${counter % 2 === 0 ? '+0530' : '-0700'}`);
    inWork(env, 'add', '--all');
    inWork(env, 'commit', '--quiet', ...(allowEmpty ? ['--allow-empty'] : []), '--cleanup=verbatim', '-m', message);
    return inWork(env, 'rev-parse', 'HEAD');
  };
  const branch = (name: string, from: string) => sh('checkout', '--quiet', '-B', name, from);
  const publish = () => sh('push', '--quiet', '--force', bare, '--all');

  /** Runs Forgejo's steps in a fresh clone of the bare repository and returns the new base tip. */
  const forgejo = (style: string, base: string, head: string, message: string, author?: { name: string; email: string }): string => {
    const clone = fs.mkdtempSync(path.join(dataDir, 'forgejo-'));
    const run = (...args: string[]) => execFileSync('git', args, { cwd: clone, env: mergerEnv, encoding: 'utf8', stdio: 'pipe' }).trim();
    run('clone', '--quiet', '--branch', base, bare, '.');
    run('fetch', '--quiet', 'origin', `${head}:tracking`);
    if (style === 'merge') {
      run('merge', '--no-ff', '--no-commit', 'tracking');
      run('commit', '--no-gpg-sign', `--message=${message}`);
    } else if (style === 'squash') {
      run('merge', '--squash', 'tracking');
      run('commit', `--author='${author!.name} <${author!.email}>'`, `--message=${message}`, '--no-gpg-sign');
    } else {
      run('checkout', '--quiet', '-b', 'staging', 'tracking');
      run('rebase', base);
      run('checkout', '--quiet', base);
      if (style === 'rebase') run('merge', '--ff-only', 'staging');
      else {
        run('merge', '--no-ff', '--no-commit', 'staging');
        run('commit', '--no-gpg-sign', `--message=${message}`);
      }
    }
    return run('rev-parse', 'HEAD');
  };
  const tipOf = (name: string) => sh('rev-parse', `refs/heads/${name}`);
  const plan = (style: MergePlan['style'], base: string, head: string, message = ''): MergePlan => ({
    style,
    baseTip: tipOf(base),
    headTip: tipOf(head),
    message,
    merger,
  });
  const catFile = (oid: string) => execFileSync('git', ['--git-dir', bare, 'cat-file', 'commit', oid], { env: baseEnv, encoding: 'utf8' });

  let root = '';

  beforeAll(() => {
    execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch', 'main', bare], { env: baseEnv });
    fs.mkdirSync(work);
    sh('init', '--quiet', '--initial-branch', 'main');
    root = commit('root', 'Ann', { 'a.txt': 'alpha\n', 'b.txt': 'beta\n', 'dir/c.txt': 'gamma\n', 'x.txt': 'one\ntwo\nthree\n' });
    // A diverged pair: the base moved on (b.txt), the head changed a.txt in two commits.
    branch('diverged-base', root);
    commit('base: beta 2', 'Bob', { 'b.txt': 'beta 2\n' });
    branch('diverged-head', root);
    commit('head: alpha 2\n\nA body line with trailing blanks   \n\n\n\nand a last paragraph\n', 'Cid', { 'a.txt': 'alpha 2\n' });
    commit('head: new file', 'Dee', { 'dir/new.txt': 'new\n' });
    // A head whose base is its ancestor.
    branch('ahead-base', root);
    branch('ahead-head', root);
    commit('ahead 1', 'Cid', { 'a.txt': 'ahead\n' });
    // Conflicts: both change x.txt's same line.
    branch('conflict-base', root);
    commit('base changes two', 'Bob', { 'x.txt': 'one\nTWO base\nthree\n' });
    branch('conflict-head', root);
    commit('head changes two', 'Cid', { 'x.txt': 'one\nTWO head\nthree\n' });
    // Rebase edge cases: an empty commit (kept), a change the base already has under another patch (dropped
    // once it becomes empty), the same patch as a base commit (dropped beforehand), and a merge (left out).
    branch('edge-base', root);
    commit('base: same change plus more', 'Bob', { 'x.txt': 'one\ntwo\nthree\nfour\n', 'b.txt': 'beta 3\n' });
    commit('base: identical patch', 'Bob', { 'dir/c.txt': 'gamma 2\n' });
    branch('edge-side', root);
    commit('side: a file', 'Eve', { 'side.txt': 'side\n' });
    branch('edge-head', root);
    commit('head: empty on purpose', 'Cid', {}, true);
    commit('head: becomes empty', 'Cid', { 'x.txt': 'one\ntwo\nthree\nfour\n' });
    commit('head: identical patch', 'Dee', { 'dir/c.txt': 'gamma 2\n' });
    sh('merge', '--quiet', '--no-ff', '-m', 'head: merge side', 'edge-side');
    commit('head: last', 'Dee', { 'a.txt': 'alpha edge\n' });
    // Unrelated histories.
    sh('checkout', '--quiet', '--orphan', 'orphan');
    sh('rm', '-r', '--quiet', '--cached', '.');
    commit('orphan root', 'Eve', { 'o.txt': 'o\n' });
    publish();
  });

  afterAll(() => {
    launcher.onApplicationShutdown();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const message = "Merge pull request 'Change alpha' (#3) from diverged-head into diverged-base";

  it('merge: a commit with the base and the head as parents, the merger as author and committer, as git merge makes it', async () => {
    const result = await merges.prepare(bare, plan('merge', 'diverged-base', 'diverged-head', `${message}\n\nA body   \n\n\n`));
    expect(result.tip).toBe(forgejo('merge', 'diverged-base', 'diverged-head', `${message}\n\nA body   \n\n\n`));
    expect(catFile(result.tip)).toContain(`parent ${tipOf('diverged-base')}\nparent ${tipOf('diverged-head')}\n`);
    expect(result.written).toEqual([result.tip]);
  });

  it('merge: a head ahead of the base still gets a merge commit (no fast-forward)', async () => {
    const result = await merges.prepare(bare, plan('merge', 'ahead-base', 'ahead-head', 'Merge it'));
    expect(result.tip).toBe(forgejo('merge', 'ahead-base', 'ahead-head', 'Merge it'));
    expect(result.tip).not.toBe(tipOf('ahead-head'));
  });

  it('squash: one commit on the base, the poster as author dated now, the merger as committer, with the trailers', async () => {
    const text = `Change alpha (#3)\nCo-authored-by: ${poster.name} <${poster.email}>\nCo-committed-by: ${poster.name} <${poster.email}>\n`;
    const result = await merges.prepare(bare, { ...plan('squash', 'diverged-base', 'diverged-head', text), squashAuthor: poster });
    expect(result.tip).toBe(forgejo('squash', 'diverged-base', 'diverged-head', text, poster));
    const raw = catFile(result.tip);
    expect(raw).toContain(`author Pat Poster <pat@example.com> ${NOW} +0000\ncommitter Mia Merger <mia@example.com> ${NOW} +0000\n`);
    expect(raw.match(/^parent /gm)).toHaveLength(1);
  });

  it('rebase: the head replayed on the base, authors and messages kept, the merger as committer', async () => {
    const result = await merges.prepare(bare, plan('rebase', 'diverged-base', 'diverged-head'));
    expect(result.tip).toBe(forgejo('rebase', 'diverged-base', 'diverged-head', ''));
    expect(result.written).toHaveLength(2);
    expect(catFile(result.written[0])).toContain('A body line with trailing blanks   \n\n\n\nand a last paragraph\n');
  });

  it('rebase: keeps a commit that was empty, drops one that becomes empty, one the base has and a merge', async () => {
    const result = await merges.prepare(bare, plan('rebase', 'edge-base', 'edge-head'));
    const subjects = result.written.map((oid) => catFile(oid).split('\n\n')[1].split('\n')[0]);
    expect(result.tip).toBe(forgejo('rebase', 'edge-base', 'edge-head', ''));
    expect(subjects).toEqual(['head: empty on purpose', 'side: a file', 'head: last']);
  });

  it('rebase: a head that contains the base is taken as it is (nothing rewritten)', async () => {
    const result = await merges.prepare(bare, plan('rebase', 'ahead-base', 'ahead-head'));
    expect(result).toEqual({ tip: tipOf('ahead-head'), written: [] });
    expect(result.tip).toBe(forgejo('rebase', 'ahead-base', 'ahead-head', ''));
  });

  it('rebase-merge: the rebased head merged with a merge commit', async () => {
    const result = await merges.prepare(bare, plan('rebase-merge', 'diverged-base', 'diverged-head', message));
    expect(result.tip).toBe(forgejo('rebase-merge', 'diverged-base', 'diverged-head', message));
    expect(result.written).toHaveLength(3);
    const ahead = await merges.prepare(bare, plan('rebase-merge', 'ahead-base', 'ahead-head', message));
    expect(ahead.tip).toBe(forgejo('rebase-merge', 'ahead-base', 'ahead-head', message));
  });

  it('fast-forward-only: the head itself when it contains the base; refused when they diverged', async () => {
    expect(await merges.prepare(bare, plan('fast-forward-only', 'ahead-base', 'ahead-head'))).toEqual({ tip: tipOf('ahead-head'), written: [] });
    await expect(merges.prepare(bare, plan('fast-forward-only', 'diverged-base', 'diverged-head'))).rejects.toBeInstanceOf(DivergingFastForwardError);
  });

  it('conflicts are domain errors (409) naming the paths, and for a rebase the commit that does not apply', async () => {
    const merge = merges.prepare(bare, plan('merge', 'conflict-base', 'conflict-head', 'm'));
    await expect(merge).rejects.toBeInstanceOf(MergeConflictError);
    await expect(merge).rejects.toMatchObject({ status: 409, paths: ['x.txt'] });
    await expect(merges.prepare(bare, { ...plan('squash', 'conflict-base', 'conflict-head', 'm'), squashAuthor: poster })).rejects.toBeInstanceOf(
      MergeConflictError,
    );
    const rebase = merges.prepare(bare, plan('rebase-merge', 'conflict-base', 'conflict-head', 'm'));
    await expect(rebase).rejects.toBeInstanceOf(RebaseConflictError);
    await expect(rebase).rejects.toMatchObject({ commit: tipOf('conflict-head'), paths: ['x.txt'] });
    await expect(merges.mergeTree(bare, tipOf('conflict-base'), tipOf('conflict-head'))).resolves.toMatchObject({ conflicts: ['x.txt'] });
  });

  it('unrelated histories and a head the base already contains are refused', async () => {
    for (const style of ['merge', 'squash', 'rebase', 'rebase-merge'] as const) {
      await expect(merges.prepare(bare, { ...plan(style, 'main', 'orphan', 'm'), squashAuthor: poster })).rejects.toBeInstanceOf(UnrelatedHistoriesError);
      await expect(merges.prepare(bare, { ...plan(style, 'ahead-head', 'ahead-base', 'm'), squashAuthor: poster })).rejects.toBeInstanceOf(NothingToMergeError);
    }
  });

  it('cleans a message as git commit -m does', () => {
    for (const text of ['Title', '\n\n  Title  \n\n\n\nbody\t \n\n', 'T\n\n\n\nCo-authored-by: x\n', 'a\r\nb', '   \n  ']) {
      const dir = fs.mkdtempSync(path.join(dataDir, 'msg-'));
      const run = (...args: string[]) => execFileSync('git', args, { cwd: dir, env: mergerEnv, encoding: 'utf8', stdio: 'pipe' });
      run('init', '--quiet');
      try {
        run('commit', '--quiet', '--allow-empty', `--message=${text}`);
      } catch {
        expect(commitMessage(text)).toBe('');
        continue;
      }
      expect(commitMessage(text)).toBe(run('cat-file', 'commit', 'HEAD').split('\n\n').slice(1).join('\n\n'));
    }
  });

  it('two merges prepared from one base tip: one compare-and-swap publishes, the other is refused, no commit lost', async () => {
    const writes = new GitWrites(git, {} as RepositoryPaths);
    sh('push', '--quiet', '--force', bare, `${tipOf('diverged-base')}:refs/heads/race`);
    const baseTip = tipOf('diverged-base');
    const [first, second] = await Promise.all([
      merges.prepare(bare, { ...plan('merge', 'diverged-base', 'diverged-head', 'first'), baseTip }),
      merges.prepare(bare, { ...plan('squash', 'diverged-base', 'ahead-head', 'second'), baseTip, squashAuthor: poster }),
    ]);
    const outcomes = await Promise.allSettled([first, second].map((result) => writes.updateRef(bare, 'refs/heads/race', result.tip, baseTip)));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const lost = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(RefChangedError);
    const won = outcomes[0].status === 'fulfilled' ? first : second;
    expect(execFileSync('git', ['--git-dir', bare, 'rev-parse', 'refs/heads/race'], { env: baseEnv, encoding: 'utf8' }).trim()).toBe(won.tip);
  });

  it('lists the authors of the head, newest first, each address once', async () => {
    expect(await merges.authors(bare, tipOf('diverged-base'), tipOf('diverged-head'))).toEqual([
      { name: 'Dee', email: 'dee@example.com' },
      { name: 'Cid', email: 'cid@example.com' },
    ]);
  });
});
