import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { deflateSync } from 'node:zlib';
import { LooseObjects, commitTree, refValue } from './loose-objects';

describe('loose objects and refs read without git', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-loose-'));
  // Standard input only for a command that reads it: one that exits before the write leaves it unwritten
  // (EPIPE), and execFileSync then throws an error that refers to itself, which the test worker cannot report.
  const git = (...args: string[]) =>
    execFileSync('git', ['--git-dir', dir, ...args], args.includes('--stdin') ? { input: 'hello\n' } : { stdio: ['ignore', 'pipe', 'pipe'] })
      .toString()
      .trim();
  const objects = path.join(dir, 'objects');

  beforeAll(() => execFileSync('git', ['init', '--bare', '--quiet', dir]));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const write = (id: string, raw: Buffer) => {
    fs.mkdirSync(path.join(objects, id.slice(0, 2)), { recursive: true });
    fs.writeFileSync(path.join(objects, id.slice(0, 2), id.slice(2)), deflateSync(raw));
  };

  it('reads what git wrote, and nothing that is not a whole loose object', async () => {
    const blob = git('hash-object', '-w', '--stdin');
    expect(await new LooseObjects(objects).read(blob)).toEqual({ oid: blob, type: 'blob', size: 6, content: Buffer.from('hello\n') });
    // A size that does not match, an unknown type, no header, a name that is no object id, an absent object.
    write('1'.repeat(40), Buffer.from('blob 7\0hello\n'));
    write('2'.repeat(40), Buffer.from('note 6\0hello\n'));
    write('3'.repeat(40), Buffer.from('hello\n'));
    fs.mkdirSync(path.join(objects, '44'));
    fs.writeFileSync(path.join(objects, '44', '4'.repeat(38)), 'not zlib');
    const reader = new LooseObjects(objects);
    for (const id of ['1'.repeat(40), '2'.repeat(40), '3'.repeat(40), '4'.repeat(40), '../objects/x', '5'.repeat(40)]) {
      expect(await reader.read(id)).toBeNull();
    }
  });

  it('stops after its budget of objects', async () => {
    const blob = git('hash-object', '-w', '--stdin');
    const reader = new LooseObjects(objects);
    for (let read = 0; read < 512; read++) expect(await reader.read(blob)).not.toBeNull();
    expect(await reader.read(blob)).toBeNull();
  });

  it("tells a ref's value from its loose file or packed-refs, and nothing for names git would not write", async () => {
    const blob = git('hash-object', '-w', '--stdin');
    const tree = execFileSync('git', ['--git-dir', dir, 'mktree'], { input: `100644 blob ${blob}\tfile\n` })
      .toString()
      .trim();
    const commit = execFileSync('git', ['--git-dir', dir, '-c', 'user.name=A', '-c', 'user.email=a@example.com', 'commit-tree', '-m', 'c', tree])
      .toString()
      .trim();
    git('update-ref', 'refs/heads/main', commit);
    expect(await refValue(dir, 'refs/heads/main')).toBe(commit);
    git('pack-refs', '--all');
    expect(fs.existsSync(path.join(dir, 'refs', 'heads', 'main'))).toBe(false);
    expect(await refValue(dir, 'refs/heads/main')).toBe(commit);
    expect(await refValue(dir, 'refs/heads/absent')).toBeNull();
    for (const name of ['HEAD', 'refs/../HEAD', 'refs/heads/.hidden', 'refs//x', 'refs/heads/a b', 'refs/heads/x.lock']) {
      expect(await refValue(dir, name)).toBeNull();
    }
    const object = await new LooseObjects(objects).read(commit);
    expect(commitTree(object!.content!)).toBe(tree);
    expect(commitTree(Buffer.from(blob))).toBeNull();
  });
});
