import { Module } from '@nestjs/common';
import { AccessStore } from './access.store';
import { BranchProtections } from './branch-protection-policy';
import { BranchProtectionStore } from './branch-protection.store';
import { MaintainerPushes } from './maintainer-pushes';
import { OrganizationPolicy } from './organization-policy';
import { RepositoryPolicy } from './repository-policy';

/**
 * The one access policy: what a caller may do to a repository, in which unit (see access-policy.ts), in an
 * organisation, to a protected branch (branch-protection.ts, branch-merge.ts), and to the head branch of a pull
 * request whose poster allows maintainers to edit (maintainer-pushes.ts).
 */
@Module({
  providers: [AccessStore, RepositoryPolicy, OrganizationPolicy, BranchProtectionStore, BranchProtections, MaintainerPushes],
  exports: [RepositoryPolicy, OrganizationPolicy, BranchProtections, MaintainerPushes],
})
export class AccessModule {}
