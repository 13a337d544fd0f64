import { Injectable } from '@nestjs/common';
import type { Page, PageQuery } from '../common/paging';
import type { QuotaUsedAttachmentWire, QuotaUsedPackageWire } from './quota.wire';

/**
 * What a module that stores files for a target tells the quota engine: how many bytes the target uses, and
 * the items behind that figure (largest first). The producers (releases, packages) register one each, so that
 * quota reads no table of theirs and they read none of quota's.
 */
export interface QuotaUsageSource<Item> {
  bytesOf(targetId: number): Promise<number>;
  list(targetId: number, page: PageQuery): Promise<Page<Item>>;
}

/** The measured items (docs/quota.md) that live outside repositories. */
export interface QuotaUsageSourceMap {
  /** LFS objects are not listed item by item (as Forgejo): only their bytes count. */
  lfs: QuotaUsageSource<never>;
  attachmentsReleases: QuotaUsageSource<QuotaUsedAttachmentWire>;
  packages: QuotaUsageSource<QuotaUsedPackageWire>;
}

const NONE: QuotaUsageSource<never> = {
  bytesOf: () => Promise.resolve(0),
  list: () => Promise.resolve({ items: [], total: 0 }),
};

/** Where producers register at start-up (onModuleInit); an item with no producer counts 0 and lists nothing. */
@Injectable()
export class QuotaUsageSources {
  private readonly sources: QuotaUsageSourceMap = { lfs: NONE, attachmentsReleases: NONE, packages: NONE };

  register<K extends keyof QuotaUsageSourceMap>(item: K, source: QuotaUsageSourceMap[K]): void {
    this.sources[item] = source;
  }

  of<K extends keyof QuotaUsageSourceMap>(item: K): QuotaUsageSourceMap[K] {
    return this.sources[item];
  }
}
