import type { DynamicModule, Type } from '@nestjs/common';
import { AuditModule } from './audit/audit.module';
import { CommonModule } from './common/common.module';
import type { AppConfig } from './config/config';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { EventsModule } from './events/events.module';
import { HttpPlatformModule } from './http/http-platform.module';
import { LoggingModule } from './logging/logging.module';

/**
 * The foundation every feature module runs on: configuration, logging, the database, the shared platform, the
 * audit log and the lifecycle events. The application imports these first; the fast tier's service harness
 * imports them with only the feature modules a spec tests.
 */
export function foundationModules(config: AppConfig): Array<Type<unknown> | DynamicModule> {
  return [ConfigModule.forRoot(config), LoggingModule, DatabaseModule.forRoot(config), CommonModule, HttpPlatformModule, AuditModule, EventsModule];
}
