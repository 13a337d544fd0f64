import { Module } from '@nestjs/common';
import { ClaimsModule } from '../claims/claims.module';
import { UsersModule } from '../users/users.module';
import { QUOTA_GATE } from './quota-gate';
import { QuotaAdminService } from './quota-admin.service';
import { QuotaEngine } from './quota.engine';
import { QuotaGroupsController } from './quota-groups.controller';
import { QuotaRulesController } from './quota-rules.controller';
import { QuotaLifecycle } from './quota-lifecycle';
import { QuotaStore } from './quota.store';
import { QuotaUsageSources } from './quota-usage-sources';
import { QuotaUsageStore } from './quota-usage.store';
import { QuotaViewsController } from './quota-views.controller';
import { QuotaViewsService } from './quota-views.service';

/**
 * Quota: rules, groups, usage, evaluation (docs/quota.md). Other modules ask it only through QUOTA_GATE
 * (quota-gate.ts), never through its tables. It is always there, so that the gate answers (everything is
 * allowed while QUOTA_ENABLED is false); its routes are QuotaRoutesModule.
 */
@Module({
  imports: [UsersModule, ClaimsModule],
  providers: [
    QuotaStore,
    QuotaUsageStore,
    QuotaUsageSources,
    QuotaEngine,
    QuotaAdminService,
    QuotaViewsService,
    QuotaLifecycle,
    { provide: QUOTA_GATE, useExisting: QuotaEngine },
  ],
  exports: [QUOTA_GATE, QuotaAdminService, QuotaViewsService, QuotaUsageSources],
})
export class QuotaModule {}

/** The quota routes; AppModule imports this only while QUOTA_ENABLED is true, so that they are 404 otherwise. */
@Module({
  imports: [QuotaModule, UsersModule],
  controllers: [QuotaRulesController, QuotaGroupsController, QuotaViewsController],
})
export class QuotaRoutesModule {}
