import { Injectable } from '@nestjs/common';
import { AccessMode } from '../access/access-mode';
import { OrganizationPolicy } from '../access/organization-policy';
import type { RepositoryCreated, RepositoryDeleted, UserDeleted } from '../events/lifecycle-events';
import { CollaborationStore } from './collaboration.store';

/** What collaborations do on lifecycle events (src/events/subscribers.ts). */
@Injectable()
export class CollaboratorsLifecycle {
  constructor(
    private readonly collaborations: CollaborationStore,
    private readonly organizationPolicy: OrganizationPolicy,
  ) {}

  /** Nothing of a deleted repository or user stays behind: the collaborations go in the deleting transaction. */
  async repositoryDeleted({ tx, repo }: RepositoryDeleted): Promise<void> {
    await this.collaborations.deleteAllOfRepository(tx, repo.id);
  }

  async userDeleted({ tx, user }: UserDeleted): Promise<void> {
    await this.collaborations.deleteAllOfUser(tx, user.id);
  }

  /**
   * The creator of an organisation's repository administers it: through their teams, or else as its admin
   * collaborator, added in the creating transaction.
   */
  async repositoryCreated({ tx, repo, owner, creator }: RepositoryCreated): Promise<void> {
    if (!owner.isOrganization || !creator.user || !(await this.organizationPolicy.creatorNeedsCollaboration(creator, owner.id))) return;
    await this.collaborations.insertIn(tx, repo.id, creator.user.id, AccessMode.Admin, repo.createdUnix);
  }
}
