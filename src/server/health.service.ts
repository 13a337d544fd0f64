import * as fs from 'node:fs';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { StorageConfig } from '../config/slices';
import { StorageReserve } from './storage-reserve';

/** The health check's verdict: overall, and per dependency, so an operator sees which one failed. */
export interface Health {
  status: 'pass' | 'fail';
  database: 'pass' | 'fail';
  storage: 'pass' | 'fail';
  /** What failed, in words; absent when everything passes. */
  message?: string;
}

/**
 * A database that hangs must not hang the health check: a load balancer probing it needs an answer within
 * seconds (two at most) to take the instance out, and another when it is back.
 */
const DATABASE_CHECK_MS = 1500;
/** Below this much free space under DATA_DIR writes are about to fail with 507, whatever the reserve. */
const STORAGE_MINIMUM_BYTES = 1024 * 1024;

@Injectable()
export class HealthService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly storageConfig: StorageConfig,
    private readonly reserve: StorageReserve,
  ) {}

  async check(): Promise<Health> {
    const [database, storage] = await Promise.all([this.database(), this.storage()]);
    const failed = [
      database === 'fail' ? 'the database does not answer' : undefined,
      storage === 'fail' ? 'no storage space left under the data directory' : undefined,
    ].filter((problem) => problem !== undefined);
    return { status: failed.length === 0 ? 'pass' : 'fail', database, storage, ...(failed.length > 0 ? { message: failed.join('; ') } : {}) };
  }

  private async database(): Promise<'pass' | 'fail'> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'fail'>((resolve) => (timer = setTimeout(() => resolve('fail'), DATABASE_CHECK_MS)));
    try {
      return await Promise.race([
        this.dataSource.query('SELECT 1').then(
          () => 'pass' as const,
          () => 'fail' as const,
        ),
        late,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async storage(): Promise<'pass' | 'fail'> {
    try {
      const stats = await fs.promises.statfs(this.storageConfig.dataDir);
      // Below the reserve, writes that need space are refused: the storage is failing for this service.
      return stats.bavail * stats.bsize >= Math.max(STORAGE_MINIMUM_BYTES, this.reserve.reserveBytes) ? 'pass' : 'fail';
    } catch {
      return 'fail';
    }
  }
}
