import { Module, OnModuleInit } from '@nestjs/common';
import { AccessMode } from '../access/access-mode';
import { OrganizationPolicy } from '../access/organization-policy';
import { ReposModule } from '../repos/repos.module';
import { RepositoriesService } from '../repos/repositories.service';
import { RepositoryCreation } from '../repos/repository-creation.service';
import { UsersModule } from '../users/users.module';
import { UsersService } from '../users/users.service';
import { CollaborationStore } from './collaboration.store';
import { CollaboratorsController } from './collaborators.controller';
import { CollaboratorsService } from './collaborators.service';

/** Repository collaborators: users given a mode on one repository beside its owner. */
@Module({
  imports: [UsersModule, ReposModule],
  controllers: [CollaboratorsController],
  providers: [CollaborationStore, CollaboratorsService],
})
export class CollaboratorsModule implements OnModuleInit {
  constructor(
    private readonly repositories: RepositoriesService,
    private readonly creation: RepositoryCreation,
    private readonly users: UsersService,
    private readonly collaborations: CollaborationStore,
    private readonly organizationPolicy: OrganizationPolicy,
  ) {}

  onModuleInit(): void {
    // Nothing of a deleted repository or user stays behind: the collaborations go in the deleting transaction.
    this.repositories.onRepositoryDeleted(async (tx, repo) => this.collaborations.deleteAllOfRepository(tx, repo.id));
    this.users.onUserDeleted(async (tx, user) => this.collaborations.deleteAllOfUser(tx, user.id));
    // The creator of an organisation's repository administers it: through their teams, or else as its admin
    // collaborator, added in the creating transaction.
    this.creation.onRepositoryCreated(async (tx, repo, owner, creator) => {
      if (!owner.isOrganization || !creator.user || !(await this.organizationPolicy.creatorNeedsCollaboration(creator, owner.id))) return;
      await this.collaborations.insertIn(tx, repo.id, creator.user.id, AccessMode.Admin, repo.createdUnix);
    });
  }
}
