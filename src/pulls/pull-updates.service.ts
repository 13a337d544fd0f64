import { Injectable } from '@nestjs/common';
import { assertMayUpdatePullHead } from '../access/pull-rules';
import { RepositoryPolicy, RepositoryTarget } from '../access/repository-policy';
import { ConflictError, InvalidInputError, NotFoundError } from '../common/errors';
import { SiteUrls } from '../common/site-urls';
import { Clock } from '../common/time';
import { ContentRepositories } from '../content/content-repository';
import { Leases } from '../database/leases';
import { GitRefs } from '../git/git-refs';
import { GitMerges } from '../git/merge-engine';
import { MergeConflictError, RebaseConflictError } from '../git/merge-errors';
import { gitSignature } from '../repos/git-signature';
import { RepositoryPushes } from '../repos/repository-pushes.service';
import { PullHeads } from './pull-heads';
import { PullServerPushes } from './pull-server-pushes';
import { PullsService } from './pulls.service';

/** Bringing a pull request's head up to date with its base, by a merge or a rebase made on the server. */
@Injectable()
export class PullUpdatesService {
  constructor(
    private readonly pulls: PullsService,
    private readonly heads: PullHeads,
    private readonly policy: RepositoryPolicy,
    private readonly content: ContentRepositories,
    private readonly refs: GitRefs,
    private readonly merges: GitMerges,
    private readonly pushes: RepositoryPushes,
    private readonly serverPushes: PullServerPushes,
    private readonly leases: Leases,
    private readonly clock: Clock,
    private readonly siteUrls: SiteUrls,
  ) {}

  /**
   * POST …/pulls/{index}/update: the base merged into the head ("Merge branch 'B' into H", the caller as author
   * and committer) or, with `style=rebase`, the head rebased onto the base; the head branch moves as a push of
   * the caller would move it. Only callers who may push the head branch (403 otherwise, and for a rebase where
   * the repository does not allow rebasing updates). A head already up to date is left as it is.
   */
  async update(target: RepositoryTarget, rawIndex: string, style: string): Promise<void> {
    const found = await this.pulls.find(target, rawIndex);
    if (found.pull.hasMerged || found.issue.isClosed) throw new InvalidInputError('');
    const rebase = style === 'rebase';
    const head = await this.heads.of(found.pull, target);
    if (!head) throw new NotFoundError();
    const headTarget =
      head.repo.id === target.repo.id
        ? target
        : new RepositoryTarget(head.repo, head.owner, target.viewer, () => this.policy.permission(target.viewer, head.repo, head.owner), null);
    await assertMayUpdatePullHead(target, headTarget, found.pull, rebase);
    const base = { repo: target.repo, owner: target.owner, dir: this.content.open(target).dir };
    await this.leases.run(`pull-merge:${found.pull.id}`, async () => {
      const content = this.content.open(headTarget);
      const now = this.clock.nowUnix();
      const caller = { ...gitSignature(target.viewer.user!, this.siteUrls, now), whenUnix: now };
      const headRef = `refs/heads/${found.pull.headBranch}`;
      const update = await this.content.withGit(async () => {
        const baseTip = (await this.refs.peelRefs(base.dir, [`refs/heads/${found.pull.baseBranch}`])).get(`refs/heads/${found.pull.baseBranch}`);
        const headTip = (await this.refs.peelRefs(content.dir, [headRef])).get(headRef);
        if (!baseTip || !headTip) throw new NotFoundError();
        // The commits are made in the head repository: a fork reaches the base's through the pool.
        if (head.repo.id !== target.repo.id) await this.heads.reach(head, base, found.pull.baseBranch, baseTip);
        if (await this.merges.isAncestor(content.dir, baseTip, headTip)) return null;
        try {
          const result = rebase
            ? await this.merges.prepare(content.dir, { style: 'rebase', baseTip, headTip, message: '', merger: caller })
            : await this.merges.prepare(content.dir, {
                style: 'merge',
                baseTip: headTip,
                headTip: baseTip,
                message: `Merge branch '${found.pull.baseBranch}' into ${found.pull.headBranch}`,
                merger: caller,
              });
          return { ref: headRef, oldId: headTip, newId: result.tip };
        } catch (error) {
          if (error instanceof MergeConflictError) throw new ConflictError('merge failed because of conflict');
          if (error instanceof RebaseConflictError) throw new ConflictError('rebase failed because of conflict');
          throw error;
        }
      });
      if (!update) return;
      await this.serverPushes.move(headTarget, content, found.pull.id, update);
      await this.pushes.recordRefChanges(head.repo.id, [update], target.viewer.user!.id);
    });
  }
}
