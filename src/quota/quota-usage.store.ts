import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MEASURED_ITEMS, MeasuredItem, NO_USAGE, QuotaUsage } from './quota-subjects';
import { QuotaUsageSources } from './quota-usage-sources';

/**
 * What a target uses, from stored sizes, never from the disk (docs/quota.md). Its repositories' sizes, public
 * and private apart, are one row read by primary key: `repository_usage`, which database triggers keep equal to
 * the sum of the repositories' stored git sizes in the same transaction as every repository write (migration
 * 1764560000000), so a check costs the same whatever the number of repositories. Issue attachments and
 * artifacts do not exist in Anvil; LFS objects, release attachments and packages are summed by the modules
 * that store them, through QuotaUsageSources.
 */
@Injectable()
export class QuotaUsageStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly sources: QuotaUsageSources,
  ) {}

  /** The target's usage; only `items` are measured (a check reads only what its matching rules sum), the rest 0. */
  async usageOf(targetId: number, items: readonly MeasuredItem[] = MEASURED_ITEMS): Promise<QuotaUsage> {
    const [repos, lfs, attachmentsReleases, packages] = await Promise.all([
      items.includes('repos') ? this.reposOf(targetId) : undefined,
      items.includes('lfs') ? this.sources.of('lfs').bytesOf(targetId) : 0,
      items.includes('attachmentsReleases') ? this.sources.of('attachmentsReleases').bytesOf(targetId) : 0,
      items.includes('packages') ? this.sources.of('packages').bytesOf(targetId) : 0,
    ]);
    return { ...NO_USAGE, ...repos, lfs, attachmentsReleases, packages };
  }

  private async reposOf(targetId: number): Promise<{ reposPublic: number; reposPrivate: number }> {
    const rows = (await this.dataSource.query('SELECT public_bytes, private_bytes FROM repository_usage WHERE owner_id = ?', [targetId])) as {
      public_bytes: number | string;
      private_bytes: number | string;
    }[];
    return rows.length === 0 ? { reposPublic: 0, reposPrivate: 0 } : { reposPublic: Number(rows[0].public_bytes), reposPrivate: Number(rows[0].private_bytes) };
  }
}
