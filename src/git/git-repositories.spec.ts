import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { GitCommand } from './git-command';
import type { GitObjectReaders } from './git-object-readers';
import { GitRepositories } from './git-repositories';
import type { RepositoryPaths } from './repository-paths';

describe('GitRepositories.size', () => {
  let directory: string;
  const repositories = new GitRepositories({} as GitCommand, {} as RepositoryPaths, {} as GitObjectReaders);

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

  it('counts a missing directory as empty', async () => {
    expect(await repositories.size(path.join(directory, 'gone'))).toBe(0);
  });
});
