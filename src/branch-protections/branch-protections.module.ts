import { Module, OnModuleInit } from '@nestjs/common';
import { BranchProtections } from '../access/branch-protection-policy';
import { ReposModule } from '../repos/repos.module';
import { RepositoriesService } from '../repos/repositories.service';
import { UsersModule } from '../users/users.module';
import { BranchProtectionsController } from './branch-protections.controller';
import { BranchProtectionsService } from './branch-protections.service';

/** The routes of branch protection rules; the rules themselves and what they refuse live in the access policy. */
@Module({
  imports: [UsersModule, ReposModule],
  controllers: [BranchProtectionsController],
  providers: [BranchProtectionsService],
})
export class BranchProtectionsModule implements OnModuleInit {
  constructor(
    private readonly repositories: RepositoriesService,
    private readonly protections: BranchProtections,
  ) {}

  onModuleInit(): void {
    // A deleted repository's rules go in the deleting transaction.
    this.repositories.onRepositoryDeleted((tx, repo) => this.protections.deleteRulesOfRepository(tx, repo.id));
  }
}
