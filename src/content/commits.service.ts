import type { RepositoryTarget } from '../access/repository-policy';
import { Injectable } from '@nestjs/common';
import { ConflictError, InvalidInputError, NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { isPlainRevision } from '../git/git-refs';
import { ContentRefs } from './content-refs';
import { ContentRepositories } from './content-repository';
import { toCommitWire } from './content.mapper';
import type { CommitWire } from './content.wire';
import { assertSafePath } from './content-paths';
import { GitReads } from '../git/git-reads';
import { GitCompare } from '../git/git-compare';
import { GitTreeBudget } from '../git/git-tree-budget';
import { Deliver, deliverGitOutput } from './download-delivery';

export interface CommitListQuery {
  sha?: string;
  path?: string;
  since?: string;
  until?: string;
  stat: boolean;
  files: boolean;
}

/** Forgejo's optional boolean query flags: absent means true, and only a parseable false turns them off. */
export function flag(value: unknown): boolean {
  if (typeof value !== 'string') return true;
  return !['false', '0', 'f', 'F', 'FALSE', 'False'].includes(value);
}

function isoTime(name: string, value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (Number.isNaN(Date.parse(value))) throw new InvalidInputError(`invalid ${name}: ${value}`);
  return new Date(value).toISOString();
}

/** History (answers as Forgejo's commits API does): pages of commits and single commits. */
@Injectable()
export class CommitsService {
  constructor(
    private readonly repositories: ContentRepositories,
    private readonly reads: GitReads,
    private readonly refs: ContentRefs,
    private readonly compare: GitCompare,
    private readonly budget: GitTreeBudget,
  ) {}

  /**
   * One count (`rev-list --count`, a single walk) for X-Total-Count, and one `log` that walks only up to the
   * page for the commits, their files and stats. An empty repository is 409, as Forgejo answers.
   */
  async list(repository: RepositoryTarget, query: CommitListQuery, page: PageQuery): Promise<Page<CommitWire>> {
    const target = this.repositories.open(repository);
    const viewer = repository.viewer;
    if (target.repo.isEmpty) throw new ConflictError('Git Repository is empty.');
    const path = query.path ? assertSafePath(query.path) : undefined;
    const since = isoTime('since', query.since);
    const until = isoTime('until', query.until);
    const { commits, total } = await this.repositories.withGit(async () => {
      const head = await this.refs.resolve(target, query.sha || undefined);
      if (!head) throw new NotFoundError();
      const filters = { path, since, until };
      // One after the other: a slot stands for one git process.
      const total = await this.reads.commits.count(target.dir, head.commit, filters);
      // Forgejo: a path that no commit touched is 404, not an empty page.
      if (path !== undefined && total === 0) throw new NotFoundError();
      const commits = await this.reads.commits.log(target.dir, head.commit, {
        ...filters,
        skip: page.offset,
        limit: page.limit,
        withChanges: query.stat || query.files,
      });
      return { commits, total };
    });
    const users = await this.refs.usersByEmail(
      viewer,
      commits.flatMap((commit) => [commit.authorEmail, commit.committerEmail]),
    );
    return { items: commits.map((commit) => toCommitWire(target.urls, commit, users, query)), total };
  }

  async get(repository: RepositoryTarget, sha: string, options: { stat: boolean; files: boolean }): Promise<CommitWire> {
    const target = this.repositories.open(repository);
    const viewer = repository.viewer;
    if (!isPlainRevision(sha)) throw new InvalidInputError(`no valid ref or sha: ${sha}`);
    const commit = await this.repositories.withGit(async () => {
      const ref = await this.refs.resolve(target, sha);
      if (!ref) return null;
      return this.reads.commits.commit(target.dir, ref.commit, options.stat || options.files);
    });
    if (!commit) throw new NotFoundError();
    const users = await this.refs.usersByEmail(viewer, [commit.authorEmail, commit.committerEmail]);
    return toCommitWire(target.urls, commit, users, options);
  }

  /**
   * `git/commits/{sha}.diff` and `.patch` (Forgejo's GetRawDiff): the commit against its first parent, streamed as
   * git writes it within one slot of the process cap. Its tree and its parent's are measured first, as a commit's
   * changes are (GitCommits.log): git works out a whole diff before it writes any of it.
   */
  async diffOrPatch(repository: RepositoryTarget, sha: string, kind: 'diff' | 'patch', deliver: Deliver): Promise<void> {
    const target = this.repositories.open(repository);
    if (!isPlainRevision(sha)) throw new NotFoundError();
    await this.repositories.withGit(async () => {
      const ref = await this.refs.resolve(target, sha);
      if (!ref) throw new NotFoundError();
      const parent = (await this.reads.commits.commits(target.dir, [ref.commit])).get(ref.commit)?.parents[0];
      await this.budget.assertWithin(target.dir, parent === undefined ? [ref.commit] : [ref.commit, parent]);
      const stream =
        kind === 'diff' ? this.compare.streamCommitDiff(target.dir, ref.commit, parent) : this.compare.streamCommitPatch(target.dir, ref.commit, parent);
      await deliverGitOutput(stream, { 'Content-Type': 'text/plain; charset=utf-8' }, deliver);
    });
  }
}
