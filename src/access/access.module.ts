import { Module } from '@nestjs/common';
import { AccessStore } from './access.store';
import { OrganizationPolicy } from './organization-policy';
import { RepositoryPolicy } from './repository-policy';

/** The one access policy: what a caller may do to a repository, in which unit (see access-policy.ts), and in an organisation. */
@Module({
  providers: [AccessStore, RepositoryPolicy, OrganizationPolicy],
  exports: [RepositoryPolicy, OrganizationPolicy],
})
export class AccessModule {}
