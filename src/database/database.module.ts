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
          useFactory: () => dataSourceOptions(config.database),
          dataSourceFactory: () => openDatabase(config),
        }),
      ],
      providers: [Transactions],
      exports: [Transactions],
    };
  }
}
