import { Module } from '@nestjs/common';
import { AccessStore } from './access.store';
import { RepositoryPolicy } from './repository-policy';

/** The one access policy: what a caller may do to a repository, in which unit (see access-policy.ts). */
@Module({
  providers: [AccessStore, RepositoryPolicy],
  exports: [RepositoryPolicy],
})
export class AccessModule {}
