import { Global, Module } from '@nestjs/common';
import { AuditController } from './audit.controller';
import { AuditEventStore } from './audit-event.store';
import { AuditService } from './audit.service';

/** The audit log; global, so that every module records its events without importing it. */
@Global()
@Module({
  controllers: [AuditController],
  providers: [AuditEventStore, AuditService],
  exports: [AuditService],
})
export class AuditModule {}
