import { Injectable } from '@nestjs/common';
import type { RepositoryDeleted, UserDeleted } from '../events/lifecycle-events';
import { IssuePushStore } from './issue-push.store';
import { IssueStore } from './issue.store';

/**
 * In the deleting transaction (src/events/subscribers.ts): a repository takes its issues, comments, label links,
 * assignees and index along; a user leaves their issues and comments to Ghost and their assignments.
 */
@Injectable()
export class IssuesLifecycle {
  constructor(
    private readonly issues: IssueStore,
    private readonly pushes: IssuePushStore,
  ) {}

  async repositoryDeleted({ tx, repo }: RepositoryDeleted): Promise<void> {
    await this.issues.deleteAllOfRepository(tx, repo.id);
    await this.pushes.deleteAllOfRepository(tx, repo.id);
  }

  async userDeleted({ tx, user }: UserDeleted): Promise<void> {
    await this.issues.forgetUser(tx, user.id);
  }
}
