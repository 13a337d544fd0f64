import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { MilestoneEntity } from './milestone.entity';
import { MilestoneStore } from './milestone.store';

/**
 * What the issue tracker asks of milestones: which one an issue may carry, the ids a list filter names, and
 * the counts it moves in its own transaction when an issue goes on or off a milestone, closes, reopens or goes.
 */
@Injectable()
export class MilestoneLookup {
  constructor(private readonly milestones: MilestoneStore) {}

  /** The repository's milestone with this id, or null (a milestone of another repository is none). */
  inRepository(repoId: number, id: number, tx?: EntityManager): Promise<MilestoneEntity | null> {
    return id > 0 ? this.milestones.findById(repoId, id, tx) : Promise.resolve(null);
  }

  byIds(ids: number[], tx?: EntityManager): Promise<MilestoneEntity[]> {
    return this.milestones.byIds([...new Set(ids.filter((id) => id > 0))], tx);
  }

  /**
   * The ids a list filter names: each part is a milestone's name, else its id; parts that name no milestone of
   * the repository are dropped (as Forgejo).
   */
  async idsNamed(repoId: number, parts: string[]): Promise<number[]> {
    const ids = new Set<number>();
    for (const part of parts) {
      const byName = await this.milestones.findByName(repoId, part);
      if (byName) {
        ids.add(byName.id);
        continue;
      }
      const id = /^\d{1,15}$/.test(part) ? Number(part) : 0;
      const byId = id > 0 ? await this.milestones.findById(repoId, id) : null;
      if (byId) ids.add(byId.id);
    }
    return [...ids];
  }

  /** The search across repositories: milestones of any repository with one of these exact names. */
  idsNamedAnywhere(names: string[]): Promise<number[]> {
    return this.milestones.idsByNames(names);
  }

  /** Moves a milestone's counts of issues and of closed issues, in the issue change's transaction. */
  moveCounts(tx: EntityManager, milestoneId: number, issues: number, closed: number): Promise<void> {
    return milestoneId > 0 ? this.milestones.moveCounts(tx, milestoneId, issues, closed) : Promise.resolve();
  }
}
