import { Module } from '@nestjs/common';
import { ClaimStore } from './claim.store';
import { Claims } from './claims';

/** Claims on budgets shared by every instance on one database: quota bytes in flight, slots of background work. */
@Module({
  providers: [ClaimStore, Claims],
  exports: [Claims],
})
export class ClaimsModule {}
