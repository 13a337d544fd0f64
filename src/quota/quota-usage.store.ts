import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { RepositoryEntity } from '../repos/repository.entity';
import { NO_USAGE, QuotaUsage } from './quota-subjects';

/**
 * What a target uses, summed in SQL from stored sizes, never from the disk (behaviour 11.1): one indexed
 * query over the target's repositories (the `owner_id` prefix of the owner/name index), split public/private.
 * LFS, issue attachments and artifacts do not exist in Anvil; release attachments and packages are 0 until
 * their tables exist (a later issue adds their sums here).
 */
@Injectable()
export class QuotaUsageStore {
  constructor(private readonly dataSource: DataSource) {}

  async usageOf(targetId: number): Promise<QuotaUsage> {
    const rows: { is_private: number | string | boolean; total: number | string | null }[] = await this.dataSource
      .getRepository(RepositoryEntity)
      .createQueryBuilder('r')
      .select('r.is_private', 'is_private')
      .addSelect('SUM(r.git_size)', 'total')
      .where('r.owner_id = :targetId', { targetId })
      .groupBy('r.is_private')
      .getRawMany();
    const usage = { ...NO_USAGE };
    for (const row of rows) {
      const total = Number(row.total ?? 0);
      if (Number(row.is_private) === 1 || row.is_private === true) usage.reposPrivate += total;
      else usage.reposPublic += total;
    }
    return usage;
  }
}
