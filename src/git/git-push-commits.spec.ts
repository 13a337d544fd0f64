import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AppConfig } from '../config/config';
import { GitCommand } from './git-command';
import { GitLauncher } from './git-launcher';
import { GitObjectReaders } from './git-object-readers';
import { GitObjects } from './git-objects';
import { GitProcesses } from './git-processes';
import { GitPushCommits } from './git-push-commits';
import type { PushHooks } from './push-hooks';

describe('GitPushCommits: the commits of a ref change, read from the object reader as git log lists them', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-push-commits-'));
  const launcher = new GitLauncher();
  const config = { dataDir, git: { maxProcesses: 8, queueTimeoutMs: 30_000, idleTimeoutMs: 600_000, drainTimeoutMs: 1_000 } } as AppConfig;
  const git = new GitCommand(config, config.git, launcher);
  const readers = new GitObjectReaders(config.git, git, new GitProcesses(config, config.git, {} as PushHooks, launcher));
  const commits = new GitPushCommits(git, new GitObjects(readers));
  const work = path.join(dataDir, 'work');
  const gitDir = path.join(work, '.git');
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dataDir,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Ann Author',
    GIT_AUTHOR_EMAIL: 'ann@example.com',
    GIT_COMMITTER_NAME: 'Con Committer',
    GIT_COMMITTER_EMAIL: 'con@example.com',
  };
  const sh = (...args: string[]): string => execFileSync('git', args, { cwd: work, env, encoding: 'utf8' }).trim();
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
    fs.writeFileSync(path.join(work, file), text);
  };
  const commitAll = (message: string): string => {
    sh('add', '--all');
    sh('commit', '--quiet', '--allow-empty', '--allow-empty-message', '-m', message);
    return sh('rev-parse', 'HEAD');
  };
  /** git's own listing, and how many `git log` runs the reader's listing took. */
  const compare = async (before: string, after: string, limit: number) => {
    const expected = await commits.readWithLog(gitDir, before, after, limit);
    const run = jest.spyOn(git, 'run');
    try {
      const actual = await commits.read(gitDir, before, after, limit);
      expect(actual).toEqual(expected);
      return { expected, logRuns: run.mock.calls.filter(([args]) => args[0] === 'log').length };
    } finally {
      run.mockRestore();
    }
  };
  const zero = '0'.repeat(40);
  let base = '';

  beforeAll(() => {
    fs.mkdirSync(work);
    sh('init', '--quiet', '--initial-branch', 'main');
    write('a.txt', 'alpha\n');
    write('dir/b.txt', 'beta\n');
    write('dir/deep/c.txt', 'gamma\n');
    write('gone/x.txt', 'x\n');
    write('becomes-dir', 'file\n');
    write('run.sh', '#!/bin/sh\n');
    base = commitAll('base');
  });

  afterAll(async () => {
    await readers.onApplicationShutdown();
    launcher.onApplicationShutdown();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists a chain of single-parent commits without git log: added, removed, modified, type changes, in path order', async () => {
    write('a.txt', 'alpha 2\n');
    write('dir/deep/new.txt', 'new\n');
    write('zeta/ünïcode name.txt', 'u\n');
    fs.rmSync(path.join(work, 'gone'), { recursive: true });
    const first = commitAll('first line\n\nbody with\nseveral lines\n');
    fs.rmSync(path.join(work, 'becomes-dir'));
    write('becomes-dir/inside.txt', 'inside\n');
    fs.chmodSync(path.join(work, 'run.sh'), 0o755);
    fs.symlinkSync('a.txt', path.join(work, 'link'));
    const second = commitAll('second');
    fs.rmSync(path.join(work, 'dir'), { recursive: true });
    write('dir', 'now a file\n');
    fs.rmSync(path.join(work, 'link'));
    write('link', 'a file now\n');
    const third = commitAll('');
    const { expected, logRuns } = await compare(base, third, 15);
    expect(logRuns).toBe(0);
    expect(expected.total).toBe(3);
    expect(expected.commits.map((commit) => commit.id)).toEqual([third, second, first]);
    expect(expected.commits[2]).toMatchObject({
      message: 'first line\n\nbody with\nseveral lines\n',
      authorName: 'Ann Author',
      authorEmail: 'ann@example.com',
      committerName: 'Con Committer',
      committerEmail: 'con@example.com',
      added: ['dir/deep/new.txt', 'zeta/ünïcode name.txt'],
      removed: ['gone/x.txt'],
      modified: ['a.txt'],
    });
    expect(expected.commits[1]).toMatchObject({ added: ['becomes-dir/inside.txt', 'link'], removed: ['becomes-dir'], modified: ['run.sh'] });
    expect(expected.commits[0]).toMatchObject({ added: ['dir'], removed: ['dir/b.txt', 'dir/deep/c.txt', 'dir/deep/new.txt'], modified: ['link'] });
    base = third;
  });

  it('reads messages as they are stored, and signature headers that run over several lines', async () => {
    const tree = sh('rev-parse', `${base}^{tree}`);
    const noNewline = execFileSync('git', ['commit-tree', tree, '-p', base], { cwd: work, env, input: 'no final newline', encoding: 'utf8' }).trim();
    const raw = [
      `tree ${tree}`,
      `parent ${noNewline}`,
      'author Ann Author <ann@example.com> 1700000000 +0100',
      'committer Con Committer <con@example.com> 1700000001 -0230',
      'gpgsig -----BEGIN PGP SIGNATURE-----',
      ' ',
      ' iQEzBAABCAAdFiEE',
      ' -----END PGP SIGNATURE-----',
      '',
      'signed',
      '',
    ].join('\n');
    const signed = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], { cwd: work, env, input: raw, encoding: 'utf8' }).trim();
    const { expected, logRuns } = await compare(base, signed, 15);
    expect(logRuns).toBe(0);
    expect(expected.commits.map((commit) => [commit.message, commit.timestamp])).toEqual([
      ['signed\n', 1700000001],
      ['no final newline', expect.any(Number)],
    ]);
  });

  it('leaves merges, new refs, force pushes, long ranges and other encodings to git log, with the same answer', async () => {
    sh('checkout', '--quiet', '-b', 'side', base);
    write('side.txt', 'side\n');
    const side = commitAll('side');
    sh('checkout', '--quiet', 'main');
    write('main.txt', 'main\n');
    const main = commitAll('main');
    sh('merge', '--quiet', '--no-edit', 'side');
    const merge = sh('rev-parse', 'HEAD');
    const tree = sh('rev-parse', `${merge}^{tree}`);
    const latin1 = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], {
      cwd: work,
      env,
      input: Buffer.concat([
        Buffer.from(
          `tree ${tree}\nparent ${merge}\nauthor A <a@example.com> 1700000000 +0000\ncommitter A <a@example.com> 1700000000 +0000\nencoding ISO-8859-1\n\ncaf`,
        ),
        Buffer.from([0xe9, 0x0a]),
      ]),
      encoding: 'utf8',
    }).trim();
    for (const [before, after, limit] of [
      [base, merge, 15],
      [zero, main, 15],
      [side, main, 15],
      [base, main, 0],
      [merge, latin1, 15],
    ] as const) {
      const { logRuns } = await compare(before, after, limit);
      expect(logRuns).toBe(1);
    }
    expect((await commits.read(gitDir, merge, latin1, 15)).commits[0].message).toBe('café\n');
  });
});
