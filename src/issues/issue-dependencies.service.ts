import { Injectable } from '@nestjs/common';
import type { RepositoryTarget } from '../access/repository-policy';
import { RepositoryPolicy } from '../access/repository-policy';
import { assertMayLinkIssues, LinkedIssue, linkedIssue, mayReadIssue } from '../access/repository-rules';
import { InvalidInputError, NotFoundError } from '../common/errors';
import { PageQuery } from '../common/paging';
import { Clock } from '../common/time';
import { Transactions } from '../database/transactions';
import { RepositoryDirectory } from '../repos/repository-directory';
import type { RepositoryEntity } from '../repos/repository.entity';
import { UserAccounts } from '../users/user-accounts';
import type { UserEntity } from '../users/user.entity';
import type { IssueEntity } from './issue.entity';
import type { IssueMeta } from './issue-dependency.options';
import { IssueStore } from './issue.store';
import type { IssueWire } from './issue.wire';
import { IssuesService } from './issues.service';
import { IssueTimeline } from './issue-timeline';

/**
 * Dependencies between issues (`/dependencies`: what an issue waits for; `/blocks`: what waits for it), across
 * repositories too. Only while the repository has dependencies on (404 otherwise, and on an archived one,
 * which /dependencies refuses at its door with 423, as Forgejo); linking takes write on the waiting issue's
 * repository and read on the other's (404 otherwise, access/repository-rules.ts). Listed issues the caller may
 * not read are left out. A link made or undone is a timeline entry on both issues.
 */
@Injectable()
export class IssueDependenciesService {
  constructor(
    private readonly issueService: IssuesService,
    private readonly issues: IssueStore,
    private readonly repositories: RepositoryDirectory,
    private readonly users: UserAccounts,
    private readonly policy: RepositoryPolicy,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly timeline: IssueTimeline,
  ) {}

  async list(target: RepositoryTarget, rawIndex: string, direction: 'dependencies' | 'blocks', page: PageQuery): Promise<IssueWire[]> {
    this.issueService.assertTracker(target);
    if (!target.repo.enableIssueDependencies) throw new NotFoundError();
    const issue = await this.issueService.find(target, rawIndex);
    return this.readable(target, await this.issues.linked(issue.id, direction, page));
  }

  /** The JSON of those of `issues` (of any repository) the caller may read; the others are left out. */
  async readable(target: RepositoryTarget, issues: IssueEntity[]): Promise<IssueWire[]> {
    const repos = new Map<number, { repo: RepositoryEntity; owner: UserEntity }>([[target.repo.id, { repo: target.repo, owner: target.owner }]]);
    const readable: IssueEntity[] = [];
    for (const other of issues) {
      if (!repos.has(other.repoId)) {
        const repo = await this.repositories.byId(other.repoId);
        const owner = repo ? await this.users.byId(repo.ownerId) : null;
        if (!repo || !owner) continue;
        repos.set(repo.id, { repo, owner });
      }
      if (await mayReadIssue(target, this.policy, repos.get(other.repoId)!, other)) readable.push(other);
    }
    return this.issueService.wires(readable, target.viewer, repos);
  }

  /**
   * POST or DELETE: on /dependencies the route's issue waits for the body's; on /blocks the body's waits for
   * the route's. Answers the route's issue (201), as Forgejo. The route admitted signed-in readers of the
   * tracker (and, on /dependencies, refused an archived repository); after the body, both issues are looked up
   * (404) before the rule of links (404).
   */
  async change(target: RepositoryTarget, rawIndex: string, direction: 'dependencies' | 'blocks', add: boolean, option: IssueMeta): Promise<IssueWire> {
    const here = await this.here(target, rawIndex);
    const there = await this.there(target, option);
    const [waiting, awaited] = direction === 'dependencies' ? [here, there] : [there, here];
    assertMayLinkIssues(waiting, awaited);
    if (add) {
      if (waiting.issue.id === awaited.issue.id) throw new InvalidInputError('an issue cannot depend on itself');
      await this.transactions.run(async (tx) => {
        // A link back along the chain would make the issues wait for each other forever.
        if (await this.issues.dependsOnTransitively(awaited.issue.id, waiting.issue.id, tx))
          throw new InvalidInputError('circular dependencies are not allowed');
        if (await this.issues.addDependency(tx, waiting.issue.id, awaited.issue.id, this.clock.nowUnix())) {
          await this.timeline.dependencyChanged(tx, waiting.issue, awaited.issue, target.viewer.user!.id, true);
        }
      });
    } else {
      await this.transactions.run(async (tx) => {
        if (await this.issues.removeDependency(tx, waiting.issue.id, awaited.issue.id)) {
          await this.timeline.dependencyChanged(tx, waiting.issue, awaited.issue, target.viewer.user!.id, false);
        }
      });
    }
    return this.issueService.one(target, here.issue);
  }

  private async here(target: RepositoryTarget, rawIndex: string): Promise<LinkedIssue> {
    const issue = await this.issueService.find(target, rawIndex);
    return linkedIssue(target, this.policy, { repo: target.repo, owner: target.owner }, issue);
  }

  /** The body's issue: in the route's repository unless `owner`/`repo` name another (404 when unseen). */
  private async there(target: RepositoryTarget, option: IssueMeta): Promise<LinkedIssue> {
    const sameRepository = (option.owner ?? '') === target.owner.name && (option.repo ?? '') === target.repo.name;
    let repo = target.repo;
    let owner = target.owner;
    if (!sameRepository && (option.owner || option.repo)) {
      const foundOwner = await this.users.byName(option.owner ?? '');
      const foundRepo = foundOwner ? await this.repositories.byOwnerAndName(foundOwner.id, option.repo ?? '') : null;
      if (!foundOwner || !foundRepo) throw new NotFoundError();
      [repo, owner] = [foundRepo, foundOwner];
    }
    const issue = option.index && option.index > 0 ? await this.issues.findByIndex(repo.id, option.index) : null;
    if (!issue) throw new NotFoundError();
    return linkedIssue(target, this.policy, { repo, owner }, issue);
  }
}
