import { Injectable } from '@nestjs/common';
import type { PushedCommit } from '../events/repository-events';
import { GitCommand } from './git-command';
import { GitObjects } from './git-objects';
import { treeEntries } from './git-tree-format';

const RECORD = '\x1e';
/** Objects the listing reads itself at most for one ref change; a larger change is listed by `git log`. */
const OBJECTS_READ_MAX = 256;
/** Larger commits and trees are left to `git log`. */
const OBJECT_MAX_BYTES = 1024 * 1024;

/** The commits a ref change brought, for event payloads: newest first, with the files each one touched. */
@Injectable()
export class GitPushCommits {
  constructor(
    private readonly git: GitCommand,
    private readonly objects: GitObjects,
  ) {}

  /**
   * `before..after` when the ref existed, else the last `limit` commits of `after`; the total counts the whole
   * range (for a new ref: what was listed). The usual push, a few commits on top of the ref, each with one
   * parent, is read from the repository's object reader (no git process: a push to a repository with hooks
   * waits for this); anything else, and what the reader cannot read, is listed by `git log`. Both give the same.
   */
  async read(dir: string, before: string, after: string, limit: number): Promise<{ commits: PushedCommit[]; total: number }> {
    const linear = await this.readLinear(dir, before, after, limit).catch(() => null);
    return linear ?? this.readWithLog(dir, before, after, limit);
  }

  /** As `read`, always through `git log` (and `git rev-list --count` when the range is longer than `limit`). */
  async readWithLog(dir: string, before: string, after: string, limit: number): Promise<{ commits: PushedCommit[]; total: number }> {
    const range = /^0+$/.test(before) ? after : `${before}..${after}`;
    const format = `${RECORD}%H%x00%an%x00%ae%x00%cn%x00%ce%x00%ct%x00%B%x00`;
    // Through the launcher: a push waits for this listing, and forking the server for it would stall every request.
    const out = await this.git.run(['log', '-z', '--no-renames', '--name-status', `--format=${format}`, `-n${limit}`, range, '--'], {
      gitDir: dir,
      offload: true,
    });
    const commits = out
      .split(RECORD)
      .filter((record) => record.trim() !== '')
      .map(parseRecord);
    let total = commits.length;
    if (range !== after && commits.length >= limit) {
      total = Number((await this.git.run(['rev-list', '--count', range, '--'], { gitDir: dir, offload: true })).trim()) || commits.length;
    }
    return { commits, total };
  }

  /**
   * `before..after` when `after` reaches `before` by at most `limit` commits of one parent each: every commit of
   * the range, newest first (the order of `git log` on such a chain), with the files it touched as `git log
   * --name-status --no-renames` names them. Null when the range is anything else (a new ref, a merge, a root, a
   * force push, more than `limit` commits, a commit in another encoding) or larger than the listing reads itself.
   */
  private async readLinear(dir: string, before: string, after: string, limit: number): Promise<{ commits: PushedCommit[]; total: number } | null> {
    if (/^0+$/.test(before)) return null;
    let reads = 0;
    const object = async (name: string, type: 'commit' | 'tree'): Promise<Buffer> => {
      if (++reads > OBJECTS_READ_MAX) throw new Unlisted();
      const bytes = await this.objects.small(dir, name, type, OBJECT_MAX_BYTES);
      if (!bytes) throw new Unlisted();
      return bytes;
    };
    const chain: ParsedCommit[] = [];
    for (let id = after; id !== before; id = chain[chain.length - 1].parents[0]) {
      if (chain.length >= limit) return null;
      const commit = parseCommit(id, await object(id, 'commit'));
      if (!commit || commit.parents.length !== 1) return null;
      chain.push(commit);
    }
    const idBytes = after.length / 2;
    const commits: PushedCommit[] = [];
    for (let index = 0; index < chain.length; index++) {
      const commit = chain[index];
      const parent = index + 1 < chain.length ? chain[index + 1] : parseCommit(before, await object(before, 'commit'));
      if (!parent) return null;
      const files: TouchedFiles = { added: [], removed: [], modified: [] };
      await diffTrees(parent.tree, commit.tree, '', files, (tree) => object(tree, 'tree'), idBytes);
      const { tree: _tree, parents: _parents, ...fields } = commit;
      commits.push({ ...fields, added: inPathOrder(files.added), removed: inPathOrder(files.removed), modified: inPathOrder(files.modified) });
    }
    return { commits, total: commits.length };
  }

  /** Branches and tags with the object each holds: compared before and after a fetch, they are its ref changes. */
  async refs(dir: string): Promise<Map<string, string>> {
    const out = await this.git.run(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads', 'refs/tags'], { gitDir: dir });
    const refs = new Map<string, string>();
    for (const line of out.split('\n')) {
      const space = line.indexOf(' ');
      if (space > 0) refs.set(line.slice(space + 1), line.slice(0, space));
    }
    return refs;
  }
}

/** What moved between two ref listings, as a push hook would have been told. */
export function diffRefs(before: Map<string, string>, after: Map<string, string>): { ref: string; oldId: string; newId: string }[] {
  const updates: { ref: string; oldId: string; newId: string }[] = [];
  for (const [ref, id] of after) {
    const old = before.get(ref);
    if (old !== id) updates.push({ ref, oldId: old ?? '0'.repeat(id.length), newId: id });
  }
  for (const [ref, id] of before) if (!after.has(ref)) updates.push({ ref, oldId: id, newId: '0'.repeat(id.length) });
  return updates;
}

function parseRecord(record: string): PushedCommit {
  const fields = record.split('\0');
  const [id, authorName, authorEmail, committerName, committerEmail, time, message] = fields;
  const commit: PushedCommit = {
    id,
    message,
    authorName,
    authorEmail,
    committerName,
    committerEmail,
    timestamp: Number(time),
    added: [],
    removed: [],
    modified: [],
  };
  const changes = fields
    .slice(7)
    .map((field) => field.replace(/^\n+/, ''))
    .filter((field) => field !== '');
  for (let index = 0; index + 1 < changes.length; index += 2) {
    const status = changes[index];
    const file = changes[index + 1];
    if (status.startsWith('A')) commit.added.push(file);
    else if (status.startsWith('D')) commit.removed.push(file);
    else commit.modified.push(file);
  }
  return commit;
}

/** The range is not one the listing reads itself. */
class Unlisted extends Error {}

type ParsedCommit = Omit<PushedCommit, 'added' | 'removed' | 'modified'> & { tree: string; parents: string[] };
type TouchedFiles = Pick<PushedCommit, 'added' | 'removed' | 'modified'>;

/** `Name <email> <seconds> <zone>` of an author or committer line. */
const PERSON = /^(.*?) ?<([^<>\n]*)> (\d+) [+-]\d{4}$/;

/**
 * A raw commit object as `git log` shows its author, committer, committer time and raw message (%B); null for
 * one it would show otherwise (another encoding, which git converts; a header line it does not expect).
 */
function parseCommit(id: string, bytes: Buffer): ParsedCommit | null {
  const text = bytes.toString('utf8');
  const end = text.indexOf('\n\n');
  const header = end < 0 ? text : text.slice(0, end);
  const message = end < 0 ? '' : text.slice(end + 2);
  let tree = '';
  const parents: string[] = [];
  let author: RegExpExecArray | null = null;
  let committer: RegExpExecArray | null = null;
  for (const line of header.split('\n')) {
    if (line.startsWith(' ')) continue; // a continued header (a signature, a merged tag)
    const space = line.indexOf(' ');
    const key = line.slice(0, space);
    const value = line.slice(space + 1);
    if (key === 'tree') tree = value;
    else if (key === 'parent') parents.push(value);
    else if (key === 'author') author = PERSON.exec(value);
    else if (key === 'committer') committer = PERSON.exec(value);
    else if (key === 'encoding') return null;
  }
  if (!tree || !author || !committer) return null;
  return {
    id,
    tree,
    parents,
    message,
    authorName: author[1],
    authorEmail: author[2],
    committerName: committer[1],
    committerEmail: committer[2],
    timestamp: Number(committer[3]),
  };
}

const isTree = (mode: string): boolean => mode === '40000';

/**
 * The files that differ between two trees (either may be absent), as `git diff-tree -r --no-renames` names them:
 * a file in both with another id or mode is modified, and a file that became a directory (or the reverse) is
 * removed and its directory's files added.
 */
async function diffTrees(
  before: string | null,
  after: string | null,
  prefix: string,
  files: TouchedFiles,
  read: (tree: string) => Promise<Buffer>,
  idBytes: number,
): Promise<void> {
  if (before === after) return;
  const entries = async (tree: string | null) => new Map(tree ? treeEntries(await read(tree), idBytes, Infinity).map((entry) => [entry.name, entry]) : []);
  const [old, next] = await Promise.all([entries(before), entries(after)]);
  for (const name of new Set([...old.keys(), ...next.keys()])) {
    const was = old.get(name);
    const is = next.get(name);
    if (was && is && was.oid === is.oid && was.mode === is.mode) continue;
    const path = prefix + name;
    if (was && is && isTree(was.mode) && isTree(is.mode)) await diffTrees(was.oid, is.oid, `${path}/`, files, read, idBytes);
    else if (was && is && !isTree(was.mode) && !isTree(is.mode)) files.modified.push(path);
    else {
      if (was) {
        if (isTree(was.mode)) await diffTrees(was.oid, null, `${path}/`, files, read, idBytes);
        else files.removed.push(path);
      }
      if (is) {
        if (isTree(is.mode)) await diffTrees(null, is.oid, `${path}/`, files, read, idBytes);
        else files.added.push(path);
      }
    }
  }
}

/** Paths in the order git lists them: by their bytes. */
function inPathOrder(paths: string[]): string[] {
  return paths.sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
}
