import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/config';
import { dataSourceOptions } from './src/database/data-source';

/** The data source the TypeORM CLI uses (`npm run migration:run`); the server migrates by itself at start. */
export default new DataSource(dataSourceOptions(loadConfig().database));
