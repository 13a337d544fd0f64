import { Module } from '@nestjs/common';
import { AccessStore } from './access.store';
import { BranchProtections } from './branch-protection-policy';
import { BranchProtectionStore } from './branch-protection.store';
import { OrganizationPolicy } from './organization-policy';
import { RepositoryPolicy } from './repository-policy';

/**
 * The one access policy: what a caller may do to a repository, in which unit (see access-policy.ts), in an
 * organisation, and to a protected branch (branch-protection.ts, branch-merge.ts).
 */
@Module({
  providers: [AccessStore, RepositoryPolicy, OrganizationPolicy, BranchProtectionStore, BranchProtections],
  exports: [RepositoryPolicy, OrganizationPolicy, BranchProtections],
})
export class AccessModule {}
