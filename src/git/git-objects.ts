import * as fs from 'node:fs';
import * as path from 'node:path';
import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { BatchReader, ReaderStoppedError } from './git-batch-reader';
import { GitObjectReaders } from './git-object-readers';
import { isPlainRevision } from './git-refs';
import { findInTree, treeEntries } from './git-tree-format';
import { TreeEntry } from './git-trees';

/** Looking up refs and commits: GitRefs spawns a command for each, GitObjects asks a batch reader. */
export interface RefLookup {
  peelRefs(dir: string, refs: string[]): Promise<Map<string, string>>;
  /** The first of `refs` (in their order) that exists and peels to a commit, with that commit; null if none. */
  peelFirst(dir: string, refs: string[]): Promise<{ ref: string; commit: string } | null>;
  resolveCommit(dir: string, revision: string): Promise<string | null>;
}

/** What tells one version of a ref file from another: git writes a new file and renames it over the old one. */
interface FileStamp {
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

/** A loose ref that names another ref (`ref: refs/heads/main`). */
const SYMBOLIC = Symbol('symbolic ref');

/** Tree entries remembered by (repository, commit, path): about 300 bytes each. */
export const ENTRIES_KEPT = 20_000;
/** A directory of up to this many entries has them all remembered when one of them is read. */
export const SIBLINGS_LEARNED = 1_000;
/** Directories remembered as learned. */
const LEARNED_KEPT = 10_000;
/** Blobs up to this size are remembered by (repository, id) ... */
export const BLOB_KEPT_MAX_BYTES = 64 * 1024;
/** ... up to this many bytes in all. */
export const BLOBS_KEPT_BYTES = 16 * 1024 * 1024;
/** Loose ref files remembered with their stat. */
const LOOSE_REFS_KEPT = 10_000;
/** Repositories whose packed-refs is remembered. */
const PACKED_REFS_KEPT = 256;
/** Ids a ref may hold, with the commit they peel to (null: not a commit). */
const PEELED_KEPT = 10_000;
/**
 * A ref file or packed-refs written this recently is read again on every lookup: a rewrite within the file
 * system's timestamp granularity could leave its stat as it was (git's "racy" rule for its index).
 */
const RACY_MS = 2_000;

/**
 * The hot reads of the content API (refs, tree entries, small blobs) through the long-lived batch readers
 * (git-object-readers.ts): no process start per request. Answers are the same as GitRefs' and GitTrees' commands give.
 * Callers must not hold a slot of the process cap around these calls (the readers hold their own).
 *
 * Objects never change, so what an object id or a commit determines is remembered (least recently used out):
 * the commit an id peels to, the entry at a path of a commit, the bytes of small blobs. Refs do change: each
 * lookup looks at the loose ref file, else packed-refs (each read again when its stat changed), as git itself
 * does, and a ref that is neither does not exist without git being asked. A warm `contents` or `raw` answer
 * needs no round trip to git at all, and one stat of the branch's ref file.
 */
@Injectable()
export class GitObjects implements RefLookup {
  /** packed-refs as last read (names and the ids they hold), by repository, with its stamp then. */
  private readonly packedRefs = new LRUCache<string, { stamp: FileStamp; refs: Map<string, string> }>({ max: PACKED_REFS_KEPT });
  /** Loose ref files as last read, by path, with their stamp then. */
  private readonly looseRefs = new LRUCache<string, { stamp: FileStamp; value: string | typeof SYMBOLIC }>({ max: LOOSE_REFS_KEPT });
  private readonly peeled = new LRUCache<string, { commit: string | null }>({ max: PEELED_KEPT });
  private readonly entries = new LRUCache<string, { entry: TreeEntry | null }>({ max: ENTRIES_KEPT });
  /** Directories (of a commit) whose entries were learned at once. */
  private readonly learned = new LRUCache<string, true>({ max: LEARNED_KEPT });
  /** Background learning under way (learnSiblings), for `learning()`. */
  private readonly learnings = new Set<Promise<void>>();
  private readonly blobs = new LRUCache<string, Buffer>({ maxSize: BLOBS_KEPT_BYTES, sizeCalculation: (bytes) => Math.max(1, bytes.length) });
  /** The clock of the racy rule; tests replace it. */
  now: () => number = Date.now;

  constructor(private readonly readers: GitObjectReaders) {}

  /** As GitTrees.peelRefs: the commits the given full ref names peel to, for those that exist. */
  async peelRefs(dir: string, refs: string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    // git reads `refs/heads/x` as a revision and, when that ref is missing, tries `refs/tags/refs/heads/x` and
    // others: only a ref that exists under exactly that name counts (for-each-ref's rule), so the name is looked
    // up in the ref store first and git is asked only to peel what it holds.
    const held = new Map<string, string>();
    const symbolic: string[] = [];
    let packed: Map<string, string> | undefined;
    for (const ref of refs) {
      if (!isRefName(ref)) continue;
      const value = this.looseRef(dir, ref) ?? (packed ??= this.packed(dir)).get(ref) ?? null;
      if (value === SYMBOLIC) symbolic.push(ref);
      else if (value !== null) held.set(ref, value);
    }
    const commits = new Map<string, string | null>();
    for (const oid of held.values()) {
      const known = this.peeled.get(`${dir}\0${oid}`);
      if (known) commits.set(oid, known.commit);
    }
    const unknown = [...new Set(held.values())].filter((oid) => !commits.has(oid));
    if (unknown.length > 0 || symbolic.length > 0) {
      const answers = await this.read(dir, (reader) => Promise.all([...unknown, ...symbolic].map((name) => reader.info(`${name}^{commit}`))));
      for (const [index, oid] of unknown.entries()) {
        const commit = answers[index]?.type === 'commit' ? answers[index].oid : null;
        commits.set(oid, commit);
        this.peeled.set(`${dir}\0${oid}`, { commit });
      }
      for (const [index, ref] of symbolic.entries()) {
        const answer = answers[unknown.length + index];
        if (answer?.type === 'commit') found.set(ref, answer.oid);
      }
    }
    for (const [ref, oid] of held) {
      const commit = commits.get(oid);
      if (commit) found.set(ref, commit);
    }
    return found;
  }

  /** Looks the refs up one after the other, and stops at the first (a branch found needs no tag lookup). */
  async peelFirst(dir: string, refs: string[]): Promise<{ ref: string; commit: string } | null> {
    for (const ref of refs) {
      const commit = (await this.peelRefs(dir, [ref])).get(ref);
      if (commit) return { ref, commit };
    }
    return null;
  }

  /** As GitTrees.resolveCommit: the commit `revision` names (branch, tag, full or short id), or null. */
  async resolveCommit(dir: string, revision: string): Promise<string | null> {
    if (!isPlainRevision(revision)) return null;
    const answer = await this.read(dir, (reader) => reader.info(`${revision}^{commit}`));
    return answer?.type === 'commit' ? answer.oid : null;
  }

  /** As GitTrees.entry: the entry at `path` in `commit`, or null; the empty path is the root tree. */
  async entry(dir: string, commit: string, entryPath: string): Promise<TreeEntry | null> {
    const key = `${dir}\0${commit}\0${entryPath}`;
    const known = this.entries.get(key);
    if (known) return known.entry && { ...known.entry };
    const entry = await this.readEntry(dir, commit, entryPath);
    this.entries.set(key, { entry });
    return entry && { ...entry };
  }

  /** The bytes of a blob (callers know its size and bound it), or null when it is missing. */
  async blob(dir: string, oid: string): Promise<Buffer | null> {
    const key = `${dir}\0${oid}`;
    const known = this.blobs.get(key);
    if (known) return known;
    const answer = await this.read(dir, (reader) => reader.contents(oid));
    if (answer?.type !== 'blob') return null;
    const bytes = answer.content ?? Buffer.alloc(0);
    if (bytes.length <= BLOB_KEPT_MAX_BYTES) this.blobs.set(key, bytes);
    return bytes;
  }

  /**
   * The bytes of the object `name` names when it is a `type` of at most `maxBytes` (its size asked first), else
   * null: missing, of another type, or larger.
   */
  async small(dir: string, name: string, type: 'commit' | 'tree', maxBytes: number): Promise<Buffer | null> {
    return this.read(dir, async (reader) => {
      const info = await reader.info(name);
      if (info?.type !== type || info.size > maxBytes) return null;
      const object = await reader.contents(info.oid);
      return object?.type === type ? (object.content ?? Buffer.alloc(0)) : null;
    });
  }

  private async readEntry(dir: string, commit: string, entryPath: string): Promise<TreeEntry | null> {
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
    this.learnSiblings(dir, commit, slash < 0 ? '' : entryPath.slice(0, slash + 1), tree.content);
    if (!found) return null;
    return toTreeEntry(found, entryPath, object?.oid === found.oid ? object.size : 0);
  }

  /**
   * The other entries of a directory just read are likely asked next (files of one directory are read together):
   * in the background, their sizes are asked in one write to the reader and every entry is remembered, so that
   * they cost no round trip for their entry. Once per directory of a commit, for directories of up to
   * SIBLINGS_LEARNED entries.
   */
  private learnSiblings(dir: string, commit: string, prefix: string, tree: Buffer): void {
    const key = `${dir}\0${commit}\0${prefix}`;
    if (this.learned.has(key)) return;
    this.learned.set(key, true);
    const siblings = treeEntries(tree, commit.length / 2, SIBLINGS_LEARNED + 1);
    if (siblings.length > SIBLINGS_LEARNED) return;
    const blobs = siblings.filter((sibling) => entryType(sibling.mode) === 'blob');
    const learning = this.read(dir, (reader) => Promise.all(blobs.map((sibling) => reader.info(sibling.oid))))
      .then((answers) => {
        const sizes = new Map(blobs.map((sibling, index) => [sibling.oid, answers[index]?.type === 'blob' ? answers[index].size : 0]));
        for (const sibling of siblings) {
          // A name that is not UTF-8 cannot be asked for by its bytes: it is read one by one, as before.
          if (sibling.name.includes('\uFFFD')) continue;
          const path = prefix + sibling.name;
          const entryKey = `${dir}\0${commit}\0${path}`;
          if (!this.entries.has(entryKey)) this.entries.set(entryKey, { entry: toTreeEntry(sibling, path, sizes.get(sibling.oid) ?? 0) });
        }
      })
      .catch(() => {
        // A hint only: the entries are read one by one when asked.
        this.learned.delete(key);
      })
      .finally(() => this.learnings.delete(learning));
    this.learnings.add(learning);
  }

  /** Settles once the background learning begun so far has (for tests: what a request then finds known). */
  async learning(): Promise<void> {
    await Promise.all([...this.learnings]);
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

  /**
   * The id the loose ref file of `ref` holds, SYMBOLIC for a symbolic ref (git resolves it), or undefined when
   * there is no such file (packed-refs decides). One stat per lookup: the file is read again only when its stat
   * changed (git replaces a ref file by renaming a new one over it: a new inode and change time), or when it was
   * written within RACY_MS of the last read. Synchronous: a stat of a small local file costs less than a
   * promise.
   */
  private looseRef(dir: string, ref: string): string | typeof SYMBOLIC | undefined {
    const file = path.join(dir, ref);
    let stat: fs.Stats | undefined;
    try {
      // A missing file (the usual case for a tag looked up by a branch's name) costs no exception.
      stat = fs.statSync(file, { throwIfNoEntry: false });
    } catch {
      // A file where a directory would be.
    }
    if (!stat?.isFile()) {
      this.looseRefs.delete(file);
      return undefined;
    }
    const known = this.looseRefs.get(file);
    if (known && sameStamp(known.stamp, stat)) return known.value;
    let text: string;
    try {
      text = fs.readFileSync(file, 'latin1');
    } catch {
      // Removed between the two calls.
      return undefined;
    }
    const oid = /^([0-9a-f]{40}|[0-9a-f]{64})\n?$/.exec(text);
    const value = oid ? oid[1] : SYMBOLIC;
    if (this.settled(stat)) this.looseRefs.set(file, { stamp: stampOf(stat), value });
    else this.looseRefs.delete(file);
    return value;
  }

  /** packed-refs' names and ids, read again only when the file changed. */
  private packed(dir: string): Map<string, string> {
    const file = path.join(dir, 'packed-refs');
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat) {
      this.packedRefs.delete(dir);
      return new Map();
    }
    const known = this.packedRefs.get(dir);
    if (known && sameStamp(known.stamp, stat)) return known.refs;
    const refs = new Map<string, string>();
    for (const line of fs.readFileSync(file, 'latin1').split('\n')) {
      if (line === '' || line.startsWith('#') || line.startsWith('^')) continue;
      const space = line.indexOf(' ');
      if (space > 0) refs.set(line.slice(space + 1), line.slice(0, space));
    }
    if (this.settled(stat)) this.packedRefs.set(dir, { stamp: stampOf(stat), refs });
    else this.packedRefs.delete(dir);
    return refs;
  }

  /** Whether a file's stamp tells its versions apart: it was written at least RACY_MS ago (git's racy rule). */
  private settled(stat: fs.Stats): boolean {
    return this.now() - Math.max(stat.mtimeMs, stat.ctimeMs) >= RACY_MS;
  }
}

function stampOf(stat: fs.Stats): FileStamp {
  return { ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs };
}

function sameStamp(stamp: FileStamp, stat: fs.Stats): boolean {
  return stamp.ino === stat.ino && stamp.size === stat.size && stamp.mtimeMs === stat.mtimeMs && stamp.ctimeMs === stat.ctimeMs;
}

/**
 * A full ref name as git allows it (check-ref-format): no empty component, none starting with a dot or ending
 * in `.lock`. It is also a path under the repository, so no other spelling may reach the same file.
 */
function isRefName(ref: string): boolean {
  return ref.startsWith('refs/') && isPlainRevision(ref) && ref.split('/').every((part) => part !== '' && !part.startsWith('.') && !part.endsWith('.lock'));
}

/** What a raw entry's mode makes it: a tree, a submodule's commit, or a blob (file or symlink). */
function entryType(mode: string): TreeEntry['type'] {
  return mode === '40000' ? 'tree' : mode === '160000' ? 'commit' : 'blob';
}

/** The TreeEntry of a raw entry at `path`, with the size of a blob (0 for trees and submodules). */
function toTreeEntry(raw: { mode: string; oid: string }, path: string, blobSize: number): TreeEntry {
  const type = entryType(raw.mode);
  return { mode: raw.mode.padStart(6, '0'), type, oid: raw.oid, size: type === 'blob' ? blobSize : 0, path };
}
