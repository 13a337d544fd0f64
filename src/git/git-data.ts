import { Injectable } from '@nestjs/common';
import { GitCommand } from './git-command';
import { isPlainRevision } from './git-refs';
import { GitEntryBudgetError, GitTreeBudget } from './git-tree-budget';

/** A ref with the object it holds (a commit, or an annotated tag object). */
export interface RefObject {
  ref: string;
  type: string;
  sha: string;
}

/** An annotated tag object as git stores it. */
export interface TagObject {
  sha: string;
  name: string;
  objectSha: string;
  objectType: string;
  taggerName: string;
  taggerEmail: string;
  /** Unix seconds and the tagger's offset, e.g. `+0200`. */
  taggerUnix: number;
  taggerOffset: string;
  message: string;
}

/** One entry of a tree listing: its path from the listed tree, and the blob size (0 for trees and submodules). */
export interface TreeListingEntry {
  path: string;
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  sha: string;
  size: number;
}

const FIELD = '\x02';

/**
 * Git's own objects for the git data routes and language statistics: refs with their objects, tag objects,
 * tree listings and blob sizes. Every call goes through GitCommand; callers hold a process slot around them.
 */
@Injectable()
export class GitData {
  constructor(
    private readonly git: GitCommand,
    private readonly treeBudget: GitTreeBudget,
  ) {}

  /** Every ref under refs/, sorted by name, with the object it holds. */
  async refs(dir: string): Promise<RefObject[]> {
    const output = await this.git.run(['for-each-ref', '--sort=refname', `--format=%(refname)${FIELD}%(objecttype)${FIELD}%(objectname)`, 'refs/'], {
      gitDir: dir,
    });
    return output
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => {
        const [ref, type, sha] = line.split(FIELD);
        return { ref, type, sha };
      });
  }

  /** The full id and type of the object `name` names (an id, a ref), or null. */
  async object(dir: string, name: string): Promise<{ sha: string; type: string } | null> {
    if (!isPlainRevision(name)) return null;
    const resolved = await this.git.probe(['rev-parse', '--verify', '--quiet', '--end-of-options', `${name}^{object}`], { gitDir: dir });
    if (resolved.exitCode !== 0) return null;
    const sha = resolved.stdout.trim();
    const type = await this.git.probe(['cat-file', '-t', sha], { gitDir: dir });
    return type.exitCode === 0 ? { sha, type: type.stdout.trim() } : null;
  }

  /** The annotated tag object with this id, or null when it is not one. */
  async tag(dir: string, sha: string): Promise<TagObject | null> {
    const object = await this.object(dir, sha);
    if (!object || object.type !== 'tag') return null;
    return parseTag(object.sha, await this.git.run(['cat-file', 'tag', object.sha], { gitDir: dir }));
  }

  /**
   * The entries of the tree `sha` names (a tree, or a commit or tag peeled to its tree): its own entries, or
   * with `recursive` every entry below it, trees included. Null when `sha` names no tree.
   */
  async tree(dir: string, sha: string, recursive: boolean): Promise<{ sha: string; entries: TreeListingEntry[] } | null> {
    const object = await this.object(dir, sha);
    if (!object) return null;
    const tree = await this.git.probe(['rev-parse', '--verify', '--quiet', `${object.sha}^{tree}`], { gitDir: dir });
    if (tree.exitCode !== 0) return null;
    const args = ['ls-tree', '-z', '-l', ...(recursive ? ['-r', '-t'] : []), tree.stdout.trim()];
    const output = await this.git.run(args, { gitDir: dir });
    return { sha: object.sha, entries: parseTreeListing(output) };
  }

  /**
   * Entries `start` to `start + count` of the tree `sha` names (its own entries, or with `recursive` every entry
   * below it in `git ls-tree -r -t` order) and how many there are in all. The listing is read as a stream and
   * stopped at the page's last entry, and only the page's blobs have their sizes read: a page of a tree of a
   * million paths costs the page. The total of a recursive listing is the tree count, which reads each distinct
   * subtree once (and keeps the counts); a tree past the entry budget is refused like every other walk of it.
   */
  async treePage(
    dir: string,
    sha: string,
    recursive: boolean,
    start: number,
    count: number,
  ): Promise<{ sha: string; total: number; entries: TreeListingEntry[] } | null> {
    const object = await this.object(dir, sha);
    if (!object) return null;
    const resolved = await this.git.probe(['rev-parse', '--verify', '--quiet', `${object.sha}^{tree}`], { gitDir: dir });
    if (resolved.exitCode !== 0) return null;
    const tree = resolved.stdout.trim();
    let total: number | null = null;
    if (recursive) {
      total = (await this.treeBudget.count(dir, tree)) ?? 0;
      if (total > this.treeBudget.limit) throw new GitEntryBudgetError(tree, this.treeBudget.limit);
    }
    const listing = await this.listPage(dir, ['ls-tree', '-z', ...(recursive ? ['-r', '-t'] : []), tree], start, count, total === null);
    const sizes = await this.blobSizes(
      dir,
      listing.page.filter((entry) => entry.type === 'blob').map((entry) => entry.sha),
    );
    const entries = listing.page.map((entry) => ({ ...entry, size: entry.type === 'blob' ? (sizes.get(entry.sha) ?? 0) : 0 }));
    return { sha: object.sha, total: total ?? listing.seen, entries };
  }

  /**
   * Records `start` to `start + count` of a NUL-separated `ls-tree` listing (without sizes), read as a stream:
   * stopped once the page is complete unless `countAll`, in which case the rest is only counted.
   */
  private async listPage(dir: string, args: string[], start: number, count: number, countAll: boolean): Promise<{ page: TreeListingEntry[]; seen: number }> {
    const stream = this.git.stream(args, { gitDir: dir });
    const page: TreeListingEntry[] = [];
    let seen = 0;
    let rest = Buffer.alloc(0);
    let stopped = false;
    const take = (record: Buffer) => {
      if (seen >= start && seen < start + count) {
        const text = record.toString('utf8');
        const tab = text.indexOf('\t');
        const [mode, type, sha] = text.slice(0, tab).split(' ');
        if (tab >= 0 && sha !== undefined) page.push({ path: text.slice(tab + 1), mode, type: type as TreeListingEntry['type'], sha, size: 0 });
      }
      seen++;
    };
    for await (const chunk of stream.stdout as AsyncIterable<Buffer>) {
      let data = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
      let nul: number;
      while ((nul = data.indexOf(0)) >= 0) {
        take(data.subarray(0, nul));
        data = data.subarray(nul + 1);
      }
      rest = Buffer.from(data);
      if (!countAll && seen >= start + count) {
        stopped = true;
        stream.kill();
        break;
      }
    }
    if (!stopped) await stream.exited;
    return { page, seen };
  }

  /** Sizes of the blobs named, read in one `cat-file --batch-check`; missing ones are left out. */
  private async blobSizes(dir: string, shas: string[]): Promise<Map<string, number>> {
    const sizes = new Map<string, number>();
    const unique = [...new Set(shas)];
    if (unique.length === 0) return sizes;
    const output = await this.git.run(['cat-file', '--batch-check=%(objectname) %(objectsize)'], { gitDir: dir, input: `${unique.join('\n')}\n` });
    for (const line of output.split('\n')) {
      const [sha, size] = line.split(' ');
      if (size !== undefined && /^\d+$/.test(size)) sizes.set(sha, Number(size));
    }
    return sizes;
  }

  /** The size of a blob, or null when `sha` names no blob. */
  async blobSize(dir: string, sha: string): Promise<{ sha: string; size: number } | null> {
    const object = await this.object(dir, sha);
    if (!object || object.type !== 'blob') return null;
    const size = await this.git.run(['cat-file', '-s', object.sha], { gitDir: dir });
    return { sha: object.sha, size: Number(size.trim()) };
  }

  async blob(dir: string, sha: string): Promise<Buffer> {
    return this.git.runBuffer(['cat-file', 'blob', sha], { gitDir: dir });
  }
}

/** `git ls-tree -z -l` output: `<mode> <type> <sha> <size or ->\t<path>` records ended by NUL. */
export function parseTreeListing(output: string): TreeListingEntry[] {
  const entries: TreeListingEntry[] = [];
  for (const record of output.split('\0')) {
    if (record === '') continue;
    const tab = record.indexOf('\t');
    const [mode, type, sha, size] = record.slice(0, tab).trim().split(/ +/);
    // A record cut off by the output cap (a tree of hundreds of thousands of entries) is left out.
    if (tab < 0 || sha === undefined || size === undefined) continue;
    entries.push({ path: record.slice(tab + 1), mode, type: type as TreeListingEntry['type'], sha, size: size === '-' ? 0 : Number(size) });
  }
  return entries;
}

/** A tag object's text: headers, a blank line, then the message. */
export function parseTag(sha: string, text: string): TagObject {
  const blank = text.indexOf('\n\n');
  const headers = (blank < 0 ? text : text.slice(0, blank)).split('\n');
  const value = (key: string) => headers.find((line) => line.startsWith(`${key} `))?.slice(key.length + 1) ?? '';
  const tagger = /^(.*) <([^>]*)> (\d+) ([+-]\d{4})$/.exec(value('tagger'));
  return {
    sha,
    name: value('tag'),
    objectSha: value('object'),
    objectType: value('type'),
    taggerName: tagger?.[1] ?? '',
    taggerEmail: tagger?.[2] ?? '',
    taggerUnix: tagger ? Number(tagger[3]) : 0,
    taggerOffset: tagger?.[4] ?? '+0000',
    message: blank < 0 ? '' : text.slice(blank + 2),
  };
}
