import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AppConfig } from '../config/config';
import { dataSourceOptions, openDatabase } from './data-source';
import { Transactions } from './transactions';

/** The data source (migrated at start) and the transaction helper, for every module. */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          // No retries: an unreachable database stops the start at once with one clear line (server/serve.ts);
          // a supervisor (compose's depends_on, systemd) decides when to try again.
          useFactory: () => ({ ...dataSourceOptions(config.database), retryAttempts: 0 }),
          dataSourceFactory: () => openDatabase(config),
        }),
      ],
      providers: [Transactions],
      exports: [Transactions],
    };
  }
}
