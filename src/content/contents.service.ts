import { Inject, Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { NotFoundError } from '../common/errors';
import { PageQuery } from '../common/paging';
import { APP_CONFIG, AppConfig } from '../config/config';
import { GitTrees, TreeEntry } from '../git/git-trees';
import { ContentRefs } from './content-refs';
import { ContentRepositories, ContentRepository } from './content-repository';
import { assertSafePath } from './content-paths';
import { contentType, NamedRef, toContentsWire } from './content.mapper';
import type { ContentsWire } from './content.wire';

/** A directory listing, whole (as Forgejo answers) or one page of it when the caller asked for a page. */
export interface DirectoryListing {
  items: ContentsWire[];
  total: number;
}

/**
 * Reading files and directories (Forgejo's services/repository/files/content.go): a file with its base64
 * content (up to MAX_DISPLAY_FILE_SIZE, else `content: null`), a symlink with its target, a submodule with its
 * URL, and a directory as the list of its entries.
 */
@Injectable()
export class ContentsService {
  constructor(
    private readonly repositories: ContentRepositories,
    private readonly trees: GitTrees,
    private readonly refs: ContentRefs,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async get(viewer: AuthContext, owner: string, repo: string, rawPath: string, refName: string | undefined, page: PageQuery | null): Promise<ContentsWire | DirectoryListing> {
    const target = await this.repositories.readable(viewer, owner, repo);
    const path = assertSafePath(rawPath);
    // An empty repository has no ref to read from (Forgejo: 404).
    if (target.repo.isEmpty) throw new NotFoundError();
    return this.repositories.withGit(async () => {
      const ref = await this.refs.require(target, refName);
      const entry = await this.trees.entry(target.dir, ref.commit, path);
      if (!entry) throw new NotFoundError();
      if (entry.type !== 'tree') return this.describe(target, ref, entry, true);
      const all = await this.trees.list(target.dir, ref.commit, path);
      const entries = page ? all.slice(page.offset, page.offset + page.limit) : all;
      return { items: await this.describeAll(target, ref, path, entries), total: all.length };
    });
  }

  /** The `ContentsResponse` of entries at a commit (the answer of writes), inside a git slot already held. */
  async describeFiles(target: ContentRepository, ref: NamedRef, paths: string[]): Promise<Map<string, ContentsWire>> {
    const entries = await this.trees.entries(target.dir, ref.commit, paths);
    const result = new Map<string, ContentsWire>();
    for (const entry of entries.values()) result.set(entry.path, await this.describe(target, ref, entry, true));
    return result;
  }

  private async describe(target: ContentRepository, ref: NamedRef, entry: TreeEntry, withContent: boolean, lastCommit?: string, submodules?: Map<string, string>): Promise<ContentsWire> {
    const type = contentType(entry);
    let content: string | null = null;
    let linkTarget: string | null = null;
    let submoduleUrl: string | null = null;
    if (type === 'file' && withContent && entry.size <= this.config.maxDisplayFileBytes) {
      content = (await this.trees.blob(target.dir, entry.oid)).toString('base64');
    } else if (type === 'symlink') {
      linkTarget = (await this.trees.blob(target.dir, entry.oid)).toString('utf8');
    } else if (type === 'submodule') {
      submoduleUrl = (submodules ?? (await this.trees.submoduleUrls(target.dir, ref.commit))).get(entry.path) ?? null;
    }
    const last = lastCommit ?? (await this.trees.lastCommit(target.dir, ref.commit, entry.path));
    return toContentsWire(target.urls, ref, entry, { lastCommit: last, content, target: linkTarget, submoduleUrl });
  }

  /** A listing: last commits of all entries in one walk, `.gitmodules` read once. */
  private async describeAll(target: ContentRepository, ref: NamedRef, dirPath: string, entries: TreeEntry[]): Promise<ContentsWire[]> {
    const names = entries.map((entry) => entry.path.split('/').pop() ?? entry.path);
    const lastCommits = await this.trees.lastCommits(target.dir, ref.commit, dirPath, names);
    const submodules = entries.some((entry) => entry.type === 'commit') ? await this.trees.submoduleUrls(target.dir, ref.commit) : new Map<string, string>();
    const result: ContentsWire[] = [];
    for (const [index, entry] of entries.entries()) {
      result.push(await this.describe(target, ref, entry, false, lastCommits.get(names[index]) ?? '', submodules));
    }
    return result;
  }
}
