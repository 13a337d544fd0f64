import { Injectable } from '@nestjs/common';
import { GitCommand } from './git-command';
import { isPlainRevision } from './git-refs';

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
  constructor(private readonly git: GitCommand) {}

  /** Every ref under refs/, sorted by name, with the object it holds. */
  async refs(dir: string): Promise<RefObject[]> {
    const output = await this.git.run(['for-each-ref', '--sort=refname', `--format=%(refname)${FIELD}%(objecttype)${FIELD}%(objectname)`, 'refs/'], { gitDir: dir });
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
