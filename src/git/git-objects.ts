import * as fs from 'node:fs';
import * as path from 'node:path';
import { Injectable } from '@nestjs/common';
import { BatchReader, ReaderStoppedError } from './git-batch-reader';
import { GitObjectReaders } from './git-object-readers';
import { isPlainRevision, TreeEntry } from './git-trees';

/** Looking up refs and commits: GitTrees spawns a command for each, GitObjects asks a batch reader. */
export interface RefLookup {
  peelRefs(dir: string, refs: string[]): Promise<Map<string, string>>;
  resolveCommit(dir: string, revision: string): Promise<string | null>;
}

interface PackedRefs {
  mtimeMs: number;
  size: number;
  ino: number;
  refs: Set<string>;
}

/**
 * The hot reads of the content API (refs, tree entries, small blobs) through the long-lived batch readers
 * (git-object-readers.ts): no process start per request. Answers are the same as GitTrees' commands give.
 * Callers must not hold a slot of the process cap around these calls (the readers hold their own).
 */
@Injectable()
export class GitObjects implements RefLookup {
  private readonly packedRefs = new Map<string, PackedRefs>();

  constructor(private readonly readers: GitObjectReaders) {}

  /** As GitTrees.peelRefs: the commits the given full ref names peel to, for those that exist. */
  async peelRefs(dir: string, refs: string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    if (refs.length === 0) return found;
    const answers = await this.read(dir, (reader) => Promise.all(refs.map((ref) => (isRefName(ref) ? reader.info(`${ref}^{commit}`) : Promise.resolve(null)))));
    for (const [index, answer] of answers.entries()) {
      // git reads `refs/heads/x` as a revision and, when that ref is missing, tries `refs/tags/refs/heads/x` and
      // others: only an answer for a ref that exists under exactly that name counts (for-each-ref's rule).
      if (answer?.type === 'commit' && (await this.refExists(dir, refs[index]))) found.set(refs[index], answer.oid);
    }
    return found;
  }

  /** As GitTrees.resolveCommit: the commit `revision` names (branch, tag, full or short id), or null. */
  async resolveCommit(dir: string, revision: string): Promise<string | null> {
    if (!isPlainRevision(revision)) return null;
    const answer = await this.read(dir, (reader) => reader.info(`${revision}^{commit}`));
    return answer?.type === 'commit' ? answer.oid : null;
  }

  /** As GitTrees.entry: the entry at `path` in `commit`, or null; the empty path is the root tree. */
  async entry(dir: string, commit: string, entryPath: string): Promise<TreeEntry | null> {
    if (entryPath === '') {
      const root = await this.read(dir, (reader) => reader.info(`${commit}^{tree}`));
      return root ? { mode: '040000', type: 'tree', oid: root.oid, size: 0, path: '' } : null;
    }
    const slash = entryPath.lastIndexOf('/');
    const parent = slash < 0 ? `${commit}^{tree}` : `${commit}:${entryPath.slice(0, slash)}`;
    // The mode (symlink, executable, submodule) is only in the parent tree; the size only in the object's header.
    const [tree, object] = await this.read(dir, (reader) => Promise.all([reader.contents(parent), reader.info(`${commit}:${entryPath}`)]));
    if (!tree || tree.type !== 'tree' || !tree.content) return null;
    const found = findInTree(tree.content, entryPath.slice(slash + 1), commit.length / 2);
    if (!found) return null;
    const type: TreeEntry['type'] = found.mode === '40000' ? 'tree' : found.mode === '160000' ? 'commit' : 'blob';
    return {
      mode: found.mode.padStart(6, '0'),
      type,
      oid: found.oid,
      size: type === 'blob' && object?.oid === found.oid ? object.size : 0,
      path: entryPath,
    };
  }

  /** The bytes of a blob (callers know its size and bound it), or null when it is missing. */
  async blob(dir: string, oid: string): Promise<Buffer | null> {
    const answer = await this.read(dir, (reader) => reader.contents(oid));
    return answer?.type === 'blob' ? (answer.content ?? Buffer.alloc(0)) : null;
  }

  /** Reads are idempotent: a reader that stopped under a request (reaped, replaced) is replaced once. */
  private async read<T>(dir: string, work: (reader: BatchReader) => Promise<T>): Promise<T> {
    try {
      return await work(await this.readers.reader(dir));
    } catch (error) {
      if (!(error instanceof ReaderStoppedError)) throw error;
      return work(await this.readers.reader(dir));
    }
  }

  /** Whether `ref` exists under exactly that name: a loose ref file, else a line of packed-refs. */
  private async refExists(dir: string, ref: string): Promise<boolean> {
    const loose = await fs.promises.lstat(path.join(dir, ref)).catch(() => null);
    if (loose?.isFile()) return true;
    return (await this.packed(dir)).has(ref);
  }

  /** packed-refs' names, read again only when the file changed. */
  private async packed(dir: string): Promise<Set<string>> {
    const file = path.join(dir, 'packed-refs');
    const stat = await fs.promises.stat(file).catch(() => null);
    if (!stat) {
      this.packedRefs.delete(dir);
      return new Set();
    }
    const known = this.packedRefs.get(dir);
    if (known && known.mtimeMs === stat.mtimeMs && known.size === stat.size && known.ino === stat.ino) return known.refs;
    const refs = new Set<string>();
    for (const line of (await fs.promises.readFile(file, 'utf8')).split('\n')) {
      if (line === '' || line.startsWith('#') || line.startsWith('^')) continue;
      const space = line.indexOf(' ');
      if (space > 0) refs.add(line.slice(space + 1));
    }
    // Bounded: one entry per repository read recently.
    if (this.packedRefs.size >= 256) this.packedRefs.delete(this.packedRefs.keys().next().value as string);
    this.packedRefs.set(dir, { mtimeMs: stat.mtimeMs, size: stat.size, ino: stat.ino, refs });
    return refs;
  }
}

function isRefName(ref: string): boolean {
  return ref.startsWith('refs/') && isPlainRevision(ref);
}

/** The entry `name` of a raw tree object: `<octal mode> <name>\0<binary id>` after one another. */
export function findInTree(tree: Buffer, name: string, idBytes: number): { mode: string; oid: string } | null {
  const wanted = Buffer.from(name, 'utf8');
  let offset = 0;
  while (offset < tree.length) {
    const space = tree.indexOf(0x20, offset);
    const nul = tree.indexOf(0x00, space + 1);
    if (space < 0 || nul < 0 || nul + 1 + idBytes > tree.length) return null;
    if (nul - space - 1 === wanted.length && tree.compare(wanted, 0, wanted.length, space + 1, nul) === 0) {
      return { mode: tree.toString('latin1', offset, space), oid: tree.toString('hex', nul + 1, nul + 1 + idBytes) };
    }
    offset = nul + 1 + idBytes;
  }
  return null;
}
