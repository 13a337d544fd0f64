import { Module } from '@nestjs/common';
import { ReposModule } from '../repos/repos.module';
import { MilestoneLookup } from './milestone-lookup';
import { MilestoneStore } from './milestone.store';
import { MilestonesController } from './milestones.controller';
import { MilestonesService } from './milestones.service';

/** Milestones of repositories; the issue tracker puts issues on them. */
@Module({
  imports: [ReposModule],
  controllers: [MilestonesController],
  providers: [MilestoneStore, MilestonesService, MilestoneLookup],
  exports: [MilestonesService, MilestoneLookup],
})
export class MilestonesModule {}
