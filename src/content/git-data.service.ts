import type { RepositoryTarget } from '../access/repository-policy';
import { Injectable } from '@nestjs/common';
import { BadRequestError, NotFoundError } from '../common/errors';
import { ContentConfig } from '../config/slices';
import { ContentRepositories } from './content-repository';
import { GIT_TREES_PER_PAGE } from './git-data-limits';
import { toAnnotatedTagWire, toGitEntryWire, toReferenceWire } from './git-data.mapper';
import type { AnnotatedTagWire, GitBlobResponseWire, GitTreeResponseWire, ReferenceWire } from './git-data.wire';
import { GitReads } from '../git/git-reads';

/**
 * The git data routes CI systems read (refs, tag objects, trees, blobs), for whoever reads the repository.
 * As Forgejo, an id that names no such object is a 400 for tags, trees and blobs, and an unknown ref a 404.
 */
@Injectable()
export class GitDataService {
  constructor(
    private readonly repositories: ContentRepositories,
    private readonly reads: GitReads,
    private readonly contentConfig: ContentConfig,
  ) {}

  /**
   * GET /repos/{o}/{r}/git/refs[/{ref}]: the refs whose full name starts with `refs/<filter>`; one object when
   * exactly one ref is named in full, a list otherwise; 404 when none.
   */
  async refs(repository: RepositoryTarget, filter: string): Promise<ReferenceWire | ReferenceWire[]> {
    const target = await this.repositories.open(repository);
    const prefix = filter === '' ? '' : `refs/${filter}`;
    const refs = (await this.repositories.withGit(() => this.reads.data.refs(target.dir))).filter((ref) => ref.ref.startsWith(prefix));
    if (refs.length === 0) throw new NotFoundError();
    const wires = refs.map((ref) => toReferenceWire(target.urls, ref));
    return wires.length === 1 && wires[0].ref === prefix ? wires[0] : wires;
  }

  /** GET /repos/{o}/{r}/git/tags/{sha}: an annotated tag object. */
  async tag(repository: RepositoryTarget, sha: string): Promise<AnnotatedTagWire> {
    const target = await this.repositories.open(repository);
    const tag = await this.repositories.withGit(() => this.reads.data.tag(target.dir, sha));
    if (!tag) throw new BadRequestError(`tag not found: ${sha.slice(0, 64)}`);
    return toAnnotatedTagWire(target.urls, tag);
  }

  /** GET /repos/{o}/{r}/git/trees/{sha}: one page of the tree's entries (all below it with `recursive`). */
  async tree(repository: RepositoryTarget, sha: string, query: { recursive: boolean; page: number; perPage: number }): Promise<GitTreeResponseWire> {
    const target = await this.repositories.open(repository);
    const perPage = query.perPage <= 0 || query.perPage > GIT_TREES_PER_PAGE ? GIT_TREES_PER_PAGE : query.perPage;
    const page = query.page <= 0 ? 1 : query.page;
    const start = perPage * (page - 1);
    const tree = await this.repositories.withGit(() => this.reads.data.treePage(target.dir, sha, query.recursive, start, perPage));
    if (!tree) throw new BadRequestError(`sha not found [${sha.slice(0, 64)}]`);
    return {
      sha: tree.sha,
      url: `${target.urls.api}/git/trees/${tree.sha}`,
      tree: tree.entries.map((entry) => toGitEntryWire(target.urls, entry)),
      // As Forgejo: true whenever the tree has more entries than a page holds, on every page.
      truncated: tree.total > perPage,
      page,
      total_count: tree.total,
    };
  }

  /** GET /repos/{o}/{r}/git/blobs/{sha}: the blob, its content in base64 up to MAX_DISPLAY_FILE_SIZE. */
  async blob(repository: RepositoryTarget, sha: string): Promise<GitBlobResponseWire> {
    const target = await this.repositories.open(repository);
    return this.repositories.withGit(async () => {
      const blob = await this.reads.data.blobSize(target.dir, sha);
      if (!blob) throw new BadRequestError(`object does not exist [id: ${sha.slice(0, 64)}]`);
      const content = blob.size <= this.contentConfig.maxDisplayFileBytes ? (await this.reads.data.blob(target.dir, blob.sha)).toString('base64') : '';
      return { content, encoding: 'base64', url: `${target.urls.api}/git/blobs/${blob.sha}`, sha: blob.sha, size: blob.size };
    });
  }
}
