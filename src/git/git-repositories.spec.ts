import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { GitCommand } from './git-command';
import { GitLauncher } from './git-launcher';
import type { GitObjectReaders } from './git-object-readers';
import { GitRepositories, isTransientGitFile } from './git-repositories';
import type { RepositoryPaths } from './repository-paths';

describe('GitRepositories.size', () => {
  let directory: string;
  const launcher = new GitLauncher();
  const repositories = new GitRepositories({} as GitCommand, {} as RepositoryPaths, {} as GitObjectReaders, launcher);

  afterAll(() => launcher.onApplicationShutdown());

  beforeEach(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-size-'));
  });

  afterEach(() => fs.rmSync(directory, { recursive: true, force: true }));

  const write = (relative: string, bytes: number) => {
    fs.mkdirSync(path.dirname(path.join(directory, relative)), { recursive: true });
    fs.writeFileSync(path.join(directory, relative), Buffer.alloc(bytes));
  };

  it('adds up the regular files of every directory, leaving out git transient files and links', async () => {
    write('HEAD', 21);
    write('objects/pack/pack-1.pack', 1000);
    write('objects/pack/pack-1.idx', 100);
    for (let fan = 0; fan < 40; fan++) write(`objects/${fan.toString(16).padStart(2, '0')}/${'a'.repeat(38)}`, 10 + fan);
    // What a push in progress or a repack holds for a moment is not the repository's.
    write('objects/tmp_objdir-incoming-x1/pack/tmp_pack_1', 5000);
    write('refs/heads/main.lock', 41);
    write('objects/pack/tmp_idx_2', 7000);
    fs.symlinkSync(path.join(directory, 'objects/pack/pack-1.pack'), path.join(directory, 'linked'));
    fs.mkdirSync(path.join(directory, 'refs/tags'), { recursive: true });
    const loose = Array.from({ length: 40 }, (_, fan) => 10 + fan).reduce((total, size) => total + size, 0);
    expect(await repositories.size(directory)).toBe(21 + 1000 + 100 + loose);
  });

  it('leaves out the same names as isTransientGitFile, with what is under them', async () => {
    const names = [
      'HEAD',
      'config',
      'packed-refs.lock',
      'tmp_objdir-incoming-x',
      'incoming-y',
      'tmp_pack_z',
      'tmp_obj_w',
      'tmp_mtimes_v',
      'anvil-index-1',
      'tmp_other',
      'pack-1.pack',
    ];
    for (const [index, name] of names.entries()) write(`${name}/f`, 1 << index);
    const kept = names.reduce((total, name, index) => total + (isTransientGitFile(name) ? 0 : 1 << index), 0);
    expect(names.filter((name) => !isTransientGitFile(name))).toEqual(['HEAD', 'config', 'tmp_other', 'pack-1.pack']);
    expect(await repositories.size(directory)).toBe(kept);
  });

  it('leaves out refs/pull/ (the refs of pull request heads) but not a branch or directory of that name elsewhere', async () => {
    write('HEAD', 21);
    for (let index = 1; index <= 20; index++) write(`refs/pull/${index}/head`, 41);
    write('refs/heads/pull', 41);
    write('refs/heads/refs/pull/x', 41);
    write('objects/pull', 3);
    expect(await repositories.size(directory)).toBe(21 + 41 + 41 + 3);
  });

  /** Sets a directory's modification time to `when` (its change time becomes now). */
  const touch = (relative: string, when: Date) => fs.utimesSync(path.join(directory, relative), when, when);
  const hourAgo = new Date(Date.now() - 3600_000);

  it('keeps the sum of a settled fan-out or pack directory until an entry comes or goes', async () => {
    write('HEAD', 21);
    write(`objects/ab/${'1'.repeat(38)}`, 100);
    write('objects/pack/pack-1.pack', 1000);
    for (const settled of ['objects/ab', 'objects/pack']) touch(settled, hourAgo);
    expect(await repositories.size(directory)).toBe(21 + 100 + 1000);
    // Written in place, a change git never makes there: the directory's times do not move, its sum is kept.
    fs.appendFileSync(path.join(directory, 'objects/pack/pack-1.pack'), Buffer.alloc(5));
    expect(await repositories.size(directory)).toBe(21 + 100 + 1000);
    // A loose object moved in and a pack removed: each moves its directory's times.
    write(`objects/ab/${'2'.repeat(38)}`, 30);
    fs.rmSync(path.join(directory, 'objects/pack/pack-1.pack'));
    expect(await repositories.size(directory)).toBe(21 + 100 + 30);
    for (const settled of ['objects/ab', 'objects/pack']) touch(settled, hourAgo);
    write('objects/pack/pack-2.pack', 7);
    expect(await repositories.size(directory)).toBe(21 + 100 + 30 + 7);
  });

  it('sums a directory changed within the last moments every time', async () => {
    write(`objects/cd/${'3'.repeat(38)}`, 10);
    // Its times are those of a change still under way (in the future, so that no slowness of the test settles it).
    touch('objects/cd', new Date(Date.now() + 3600_000));
    expect(await repositories.size(directory)).toBe(10);
    fs.appendFileSync(path.join(directory, `objects/cd/${'3'.repeat(38)}`), Buffer.alloc(5));
    expect(await repositories.size(directory)).toBe(15);
  });

  it('counts a missing directory as empty', async () => {
    expect(await repositories.size(path.join(directory, 'gone'))).toBe(0);
    expect(await repositories.size(path.join(directory, 'gone', 'objects', 'ab'))).toBe(0);
  });
});
