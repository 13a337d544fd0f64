import { Module } from '@nestjs/common';
import { BlobsModule } from '../blobs/blobs.module';
import { GitModule } from '../git/git.module';
import { BlobReconciliation } from './blob-reconciliation';
import { IntegrityStore } from './integrity.store';
import { ProcessLiveness } from './process-liveness';
import { Reconciliation } from './reconciliation.service';

/**
 * The agreement of the database with DATA_DIR: the start-up reconciliation, `anvil doctor`, and the liveness rows
 * by which a live instance clears what a dead one left.
 */
@Module({
  imports: [GitModule, BlobsModule],
  providers: [IntegrityStore, BlobReconciliation, Reconciliation, ProcessLiveness],
  exports: [Reconciliation, ProcessLiveness],
})
export class IntegrityModule {}
