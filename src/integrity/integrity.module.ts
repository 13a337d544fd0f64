import { Module } from '@nestjs/common';
import { BlobsModule } from '../blobs/blobs.module';
import { GitModule } from '../git/git.module';
import { BlobReconciliation } from './blob-reconciliation';
import { IntegrityStore } from './integrity.store';
import { Reconciliation } from './reconciliation.service';

/** The agreement of the database with DATA_DIR: the start-up reconciliation and `anvil doctor`. */
@Module({
  imports: [GitModule, BlobsModule],
  providers: [IntegrityStore, BlobReconciliation, Reconciliation],
  exports: [Reconciliation],
})
export class IntegrityModule {}
