import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { LabelEntity } from './label.entity';
import { LabelStore } from './label.store';

/** Labels as the issue tracker reads them: by id (a page's labels) and by name (the `labels` filter). */
@Injectable()
export class LabelLookup {
  constructor(private readonly store: LabelStore) {}

  byIds(ids: number[], tx?: EntityManager): Promise<LabelEntity[]> {
    return this.store.byIds(ids, tx);
  }

  /** The search across repositories: labels of any repository or organisation with one of these names. */
  idsNamedAnywhere(names: string[]): Promise<number[]> {
    return this.store.idsByNames(names);
  }

  /** `orgId`: the repository's owner when an organisation (its labels count too), else 0. */
  byNames(repoId: number, orgId: number, names: string[]): Promise<LabelEntity[]> {
    return this.store.byNames(repoId, orgId, names);
  }
}
