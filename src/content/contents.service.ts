import type { RepositoryTarget } from '../access/repository-policy';
import { Injectable } from '@nestjs/common';
import { NotFoundError } from '../common/errors';
import { PageQuery } from '../common/paging';
import { ContentConfig } from '../config/slices';
import type { TreeEntry } from '../git/git-trees';
import { ContentRefs } from './content-refs';
import { ContentRepositories, ContentRepository } from './content-repository';
import { assertSafePath } from './content-paths';
import { contentType, NamedRef, toContentsWire } from './content.mapper';
import type { ContentsWire } from './content.wire';
import { GitReads } from '../git/git-reads';

/** A directory listing, whole (as Forgejo answers) or one page of it when the caller asked for a page. */
export interface DirectoryListing {
  items: ContentsWire[];
  total: number;
}

/**
 * A directory listing asked for without `page`/`limit` holds at most this many entries (GitHub's contents API
 * stops at 1 000 too): the answer, and the history walk behind it, stay bounded however large the directory.
 */
export const MAX_UNPAGED_ENTRIES = 1_000;

/** How long a `contents` answer waits for the history walk of its commit to reach its path before asking git. */
export const WALK_WAIT_MS = 2_000;

/**
 * Reading files and directories (answers as Forgejo's contents API does): a file with its base64
 * content (up to MAX_DISPLAY_FILE_SIZE, else `content: null`), a symlink with its target, a submodule with its
 * URL, and a directory as the list of its entries.
 */
@Injectable()
export class ContentsService {
  constructor(
    private readonly repositories: ContentRepositories,
    private readonly reads: GitReads,
    private readonly refs: ContentRefs,
    private readonly contentConfig: ContentConfig,
  ) {}

  async get(repository: RepositoryTarget, rawPath: string, refName: string | undefined, page: PageQuery | null): Promise<ContentsWire | DirectoryListing> {
    const target = this.repositories.open(repository);
    const path = assertSafePath(rawPath);
    // Forgejo answers an empty repository with an empty listing, whatever the path.
    if (target.repo.isEmpty) return { items: [], total: 0 };
    // The ref, the entry and a file's bytes come from the batch readers (no process start, no slot held); only
    // what they cannot answer (a last commit not yet known, a listing, submodule URLs) runs commands in a slot.
    const { ref, entry } = await this.repositories.withReaders(async () => {
      const found = await this.refs.require(target, refName, this.reads.objects);
      return { ref: found, entry: await this.reads.objects.entry(target.dir, found.commit, path) };
    });
    if (!entry) throw new NotFoundError();
    if (entry.type !== 'tree') return this.describeOne(target, ref, entry);
    // Forgejo answers a directory whole; a huge one is cut at MAX_UNPAGED_ENTRIES (X-Total-Count tells the rest).
    const window = page ?? { page: 1, limit: MAX_UNPAGED_ENTRIES, offset: 0 };
    return this.repositories.withGit(async () => {
      const all = await this.reads.trees.list(target.dir, ref.commit, path);
      const entries = all.slice(window.offset, window.offset + window.limit);
      return { items: await this.describeAll(target, ref, path, entries), total: all.length };
    });
  }

  /** One file, symlink or submodule, as `get` answers it. */
  private async describeOne(target: ContentRepository, ref: NamedRef, entry: TreeEntry): Promise<ContentsWire> {
    const type = contentType(entry);
    let content: string | null = null;
    let linkTarget: string | null = null;
    if ((type === 'file' && entry.size <= this.contentConfig.maxDisplayFileBytes) || type === 'symlink') {
      const bytes = await this.repositories.withReaders(() => this.reads.objects.blob(target.dir, entry.oid));
      if (!bytes) throw new NotFoundError();
      if (type === 'file') content = bytes.toString('base64');
      else linkTarget = bytes.toString('utf8');
    }
    // The first miss for a commit starts one walk of its history that learns the answers for most files: a
    // light process, so misses meanwhile wait for it to reach their path (a while at most) rather than each
    // start their own.
    let lastCommit = await this.reads.lastCommits.learned(target.dir, ref.commit, entry.path, WALK_WAIT_MS);
    let submoduleUrl: string | null = null;
    if (lastCommit === undefined || type === 'submodule') {
      await this.repositories.withGit(async () => {
        lastCommit = await this.reads.lastCommits.find(target.dir, ref.commit, entry.path);
        if (type === 'submodule') submoduleUrl = (await this.reads.trees.submoduleUrls(target.dir, ref.commit)).get(entry.path) ?? null;
      });
    }
    return toContentsWire(target.urls, ref, entry, { lastCommit: lastCommit ?? '', content, target: linkTarget, submoduleUrl });
  }

  /** The `ContentsResponse` of entries at a commit (the answer of writes), inside a git slot already held. */
  async describeFiles(target: ContentRepository, ref: NamedRef, paths: string[]): Promise<Map<string, ContentsWire>> {
    const entries = await this.reads.trees.entries(target.dir, ref.commit, paths);
    const result = new Map<string, ContentsWire>();
    for (const entry of entries.values()) result.set(entry.path, await this.describe(target, ref, entry, true));
    return result;
  }

  private async describe(
    target: ContentRepository,
    ref: NamedRef,
    entry: TreeEntry,
    withContent: boolean,
    lastCommit?: string,
    submodules?: Map<string, string>,
  ): Promise<ContentsWire> {
    const type = contentType(entry);
    let content: string | null = null;
    let linkTarget: string | null = null;
    let submoduleUrl: string | null = null;
    if (type === 'file' && withContent && entry.size <= this.contentConfig.maxDisplayFileBytes) {
      content = (await this.reads.trees.blob(target.dir, entry.oid)).toString('base64');
    } else if (type === 'symlink') {
      linkTarget = (await this.reads.trees.blob(target.dir, entry.oid)).toString('utf8');
    } else if (type === 'submodule') {
      submoduleUrl = (submodules ?? (await this.reads.trees.submoduleUrls(target.dir, ref.commit))).get(entry.path) ?? null;
    }
    const last = lastCommit ?? (await this.reads.trees.lastCommit(target.dir, ref.commit, entry.path));
    return toContentsWire(target.urls, ref, entry, { lastCommit: last, content, target: linkTarget, submoduleUrl });
  }

  /** A listing: last commits of all entries in one walk, `.gitmodules` read once. */
  private async describeAll(target: ContentRepository, ref: NamedRef, dirPath: string, entries: TreeEntry[]): Promise<ContentsWire[]> {
    const names = entries.map((entry) => entry.path.split('/').pop() ?? entry.path);
    const lastCommits = await this.reads.trees.lastCommits(target.dir, ref.commit, dirPath, names);
    const submodules = entries.some((entry) => entry.type === 'commit')
      ? await this.reads.trees.submoduleUrls(target.dir, ref.commit)
      : new Map<string, string>();
    const result: ContentsWire[] = [];
    for (const [index, entry] of entries.entries()) {
      result.push(await this.describe(target, ref, entry, false, lastCommits.get(names[index]) ?? '', submodules));
    }
    return result;
  }
}
