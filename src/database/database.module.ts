import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AppConfig } from '../config/config';
import { dataSourceOptions, openDatabase } from './data-source';
import { DataSource } from 'typeorm';
import { ownProcessTag } from '../common/process-identity';
import { Leases } from './leases';
import { changeRows, Transactions } from './transactions';

/** The data source (migrated at start), the transaction helper and the cross-process leases, for every module. */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(config: Pick<AppConfig, 'database'>): DynamicModule {
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
      providers: [
        Transactions,
        {
          provide: Leases,
          inject: [DataSource, Transactions],
          useFactory: (dataSource: DataSource, transactions: Transactions) =>
            // Bookkeeping: on SQLite every holder runs on this machine, and a power cut that undoes a lease row
            // has ended its holder too. No kept answer shows a lease, so renewals (every few seconds, for this
            // process's liveness) leave the answers kept (src/database/recent-reads.ts).
            new Leases(
              dataSource,
              (sql, parameters) => transactions.runBookkeeping((tx) => changeRows(tx, sql, parameters), { unseen: true }),
              ownProcessTag(),
            ),
        },
      ],
      exports: [Transactions, Leases],
    };
  }
}
