import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AppConfig } from '../config/config';
import { GitCommand } from './git-command';
import { GitLauncher } from './git-launcher';
import { LOOSE_REFS_PACKED_AT, RefPacking } from './ref-packing';

describe('RefPacking: pull request refs packed once many are loose, with real git', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-ref-packing-'));
  const launcher = new GitLauncher();
  const config = { dataDir, git: { maxProcesses: 8, queueTimeoutMs: 30_000, idleTimeoutMs: 600_000, drainTimeoutMs: 1_000 } } as AppConfig;
  const packing = new RefPacking(new GitCommand(config, config.git, launcher));
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dataDir, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
  let dir: string;
  let commit: string;
  const git = (...args: string[]): string => execFileSync('git', ['--git-dir', dir, ...args], { env, encoding: 'utf8' }).trim();
  const loose = () =>
    execFileSync('find', [path.join(dir, 'refs'), '-type', 'f'], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean).length;
  const packedLines = () => (fs.existsSync(path.join(dir, 'packed-refs')) ? fs.readFileSync(path.join(dir, 'packed-refs'), 'utf8') : '');
  const writePullRefs = (from: number, to: number) => {
    for (let n = from; n <= to; n++) git('update-ref', `refs/pull/${n}/head`, commit);
  };

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(dataDir, 'repo-'));
    execFileSync('git', ['init', '--quiet', '--bare', '-b', 'main', dir], { env });
    const tree = git('mktree');
    commit = execFileSync('git', ['--git-dir', dir, 'commit-tree', tree, '-m', 'first'], {
      env: { ...env, GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com' },
      encoding: 'utf8',
    }).trim();
    git('update-ref', 'refs/heads/main', commit);
  });

  afterAll(() => {
    launcher.onApplicationShutdown();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('leaves fewer loose pull refs alone, and packs them all, branches too, once there are enough', async () => {
    writePullRefs(1, LOOSE_REFS_PACKED_AT - 1);
    packing.wrote(dir, 'refs/pull');
    await packing.settled(dir);
    expect(loose()).toBe(LOOSE_REFS_PACKED_AT);
    const refs = git('for-each-ref', '--format=%(refname) %(objectname)');
    writePullRefs(LOOSE_REFS_PACKED_AT, LOOSE_REFS_PACKED_AT);
    packing.wrote(dir, 'refs/pull');
    await packing.settled(dir);
    expect(loose()).toBe(0);
    expect(fs.readdirSync(path.join(dir, 'refs', 'pull'))).toEqual([]);
    expect(packedLines()).toContain(`${commit} refs/pull/${LOOSE_REFS_PACKED_AT}/head`);
    expect(git('for-each-ref', '--format=%(refname) %(objectname)')).toBe(
      `${refs}\nrefs/pull/${LOOSE_REFS_PACKED_AT}/head ${commit}`.split('\n').sort().join('\n'),
    );
  });

  it('gives way to a writer holding packed-refs.lock, and packs at the next write', async () => {
    writePullRefs(1, LOOSE_REFS_PACKED_AT);
    const lock = path.join(dir, 'packed-refs.lock');
    fs.writeFileSync(lock, '');
    packing.wrote(dir, 'refs/pull');
    await packing.settled(dir);
    expect(loose()).toBe(LOOSE_REFS_PACKED_AT + 1);
    fs.rmSync(lock);
    writePullRefs(LOOSE_REFS_PACKED_AT + 1, LOOSE_REFS_PACKED_AT + 1);
    packing.wrote(dir, 'refs/pull');
    await packing.settled(dir);
    expect(loose()).toBe(0);
    expect(git('for-each-ref', '--count=1', '--format=%(objectname)', `refs/pull/${LOOSE_REFS_PACKED_AT + 1}/head`)).toBe(commit);
  });
});
