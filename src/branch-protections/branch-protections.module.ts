import { Module } from '@nestjs/common';
import { ReposModule } from '../repos/repos.module';
import { UsersModule } from '../users/users.module';
import { BranchProtectionsController } from './branch-protections.controller';
import { BranchProtectionsService } from './branch-protections.service';

/** The routes of branch protection rules; the rules themselves and what they refuse live in the access policy. */
@Module({
  imports: [UsersModule, ReposModule],
  controllers: [BranchProtectionsController],
  providers: [BranchProtectionsService],
})
export class BranchProtectionsModule {}
