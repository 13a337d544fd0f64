import type { RepositoryTarget } from '../access/repository-policy';
import { Inject, Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { ConflictError, ForbiddenError, NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { RefInfo } from '../git/git-refs';
import { GitWrites, RefChangedError } from '../git/git-writes';
import { QUOTA_GATE, QuotaGate } from '../quota/quota-gate';
import type { CreateBranchOption } from './content.options';
import { ContentRefs } from './content-refs';
import { ContentRepositories, ContentRepository, zeroIdLike } from './content-repository';
import { toBranchWire } from './content.mapper';
import type { BranchWire } from './content.wire';
import { GitReads } from '../git/git-reads';
import { BranchProtections } from '../access/branch-protection-policy';
import { GitChanges } from '../git/git-changes';

const HEADS = 'refs/heads/';

/** Branches of a repository (answers as Forgejo's branch API does), read from and written to git refs. */
@Injectable()
export class BranchesService {
  constructor(
    private readonly repositories: ContentRepositories,
    private readonly reads: GitReads,
    private readonly writes: GitWrites,
    private readonly refs: ContentRefs,
    @Inject(QUOTA_GATE) private readonly quota: QuotaGate,
    private readonly protections: BranchProtections,
    private readonly changes: GitChanges,
  ) {}

  async list(repository: RepositoryTarget, query: PageQuery): Promise<Page<BranchWire>> {
    const target = this.repositories.open(repository);
    const viewer = repository.viewer;
    const all = await this.repositories.withGit(() => this.reads.refs.refs(target.dir, HEADS));
    const items = all.slice(query.offset, query.offset + query.limit);
    return { items: await this.toWires(viewer, target, items), total: all.length };
  }

  async get(repository: RepositoryTarget, branch: string): Promise<BranchWire> {
    const target = this.repositories.open(repository);
    const viewer = repository.viewer;
    const ref = await this.repositories.withGit(() => this.find(target, branch));
    if (!ref) throw new NotFoundError();
    return (await this.toWires(viewer, target, [ref]))[0];
  }

  /**
   * The default branch is refused with 403, as the push hook refuses deleting it; an empty repository has no
   * branch at all, so any name there is 404 (as Forgejo answers), the default one included. A protected branch
   * is refused to everyone (403 `branch protected`), as the access policy says.
   */
  async delete(repository: RepositoryTarget, branch: string): Promise<void> {
    const target = this.repositories.open(repository);
    if (target.repo.isEmpty) throw new NotFoundError('Git Repository is empty.');
    if (branch === target.repo.defaultBranch) throw new ForbiddenError('can not delete default branch');
    if (await this.repositories.withGit(() => this.find(target, branch))) {
      await this.protections.assertAllowed(target.repo.id, {
        door: 'branch-api',
        branch,
        pusher: this.protections.callerPusher(repository),
        facts: { deletion: true, isForcePush: async () => false, firstChangedPath: async () => null },
      });
    }
    await this.repositories.deleteRef(repository.viewer, target, () => this.find(target, branch));
  }

  /** Order: 404 → 403 → quota 413 → empty 404 → start ref 404 → existing branch 409. */
  async create(repository: RepositoryTarget, body: CreateBranchOption): Promise<BranchWire> {
    const target = this.repositories.open(repository);
    const viewer = repository.viewer;
    await this.quota.assertCanWrite({ id: target.owner.id, name: target.owner.name }, 'size:repos:all');
    if (target.repo.isEmpty) throw new NotFoundError('Git Repository is empty.');
    const ref = await this.repositories.withGit(async () => {
      const start = await this.refs.resolve(target, body.old_ref_name || body.old_branch_name || undefined);
      if (!start) throw new NotFoundError('The old branch does not exist');
      const name = `${HEADS}${body.new_branch_name}`;
      // A new branch is judged as a push creating it would be (its files, the permission to push).
      await this.protections.assertAllowed(target.repo.id, {
        door: 'git',
        branch: body.new_branch_name,
        pusher: this.protections.callerPusher(repository),
        facts: this.changes.reading(target.dir, zeroIdLike(start.commit), start.commit),
      });
      try {
        await this.writes.updateRef(target.dir, name, start.commit, null);
      } catch (error) {
        if (error instanceof RefChangedError) throw new ConflictError('The branch already exists.');
        throw error;
      }
      return this.find(target, body.new_branch_name);
    });
    if (ref) await this.repositories.recordRefChanges(viewer, target, [{ ref: ref.ref, oldId: zeroIdLike(ref.oid), newId: ref.oid }]);
    if (!ref) throw new NotFoundError();
    return (await this.toWires(viewer, target, [ref]))[0];
  }

  private async find(target: ContentRepository, branch: string): Promise<RefInfo | undefined> {
    const refs = await this.reads.refs.refs(target.dir, `${HEADS}${branch}`);
    return refs.find((ref) => ref.ref === `${HEADS}${branch}`);
  }

  private async toWires(viewer: AuthContext, target: ContentRepository, refs: RefInfo[]): Promise<BranchWire[]> {
    const usernames = await this.refs.usernamesByEmail(
      viewer,
      refs.flatMap((ref) => [ref.commit.authorEmail, ref.commit.committerEmail]),
    );
    const views = await this.protections.branchViews(
      target.target,
      refs.map((ref) => ref.ref.slice(HEADS.length)),
    );
    return refs.map((ref) => toBranchWire(target.urls, ref, views.get(ref.ref.slice(HEADS.length))!, usernames));
  }
}
