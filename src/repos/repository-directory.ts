import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { RepositoryEntity } from './repository.entity';
import { RepositoryCounter, RepositoryStore } from './repository.store';

/**
 * What other modules read and change of repository rows (mirrors, releases, teams, language statistics).
 * RepositoryStore stays inside the repos module; each method is the one statement it delegates to, returned
 * as it is (no extra query, no extra await). A route's lookup by names is not here: it is RepositoryAssignment's
 * alone (RepositoryRouteLookup).
 */
@Injectable()
export class RepositoryDirectory {
  constructor(private readonly store: RepositoryStore) {}

  byId(id: number, tx?: EntityManager): Promise<RepositoryEntity | null> {
    return this.store.findById(id, tx);
  }

  /** Rows by id, in no particular order; missing ids are left out. */
  byIds(ids: number[], tx?: EntityManager): Promise<RepositoryEntity[]> {
    return this.store.findByIds(ids, tx);
  }

  /** Case-insensitive lookup by owner and name. */
  byOwnerAndName(ownerId: number, name: string, tx?: EntityManager): Promise<RepositoryEntity | null> {
    return this.store.findByOwnerAndName(ownerId, name, tx);
  }

  /** The owner's direct fork of `sourceId`, if any (an owner has at most one). */
  forkOf(ownerId: number, sourceId: number, tx?: EntityManager): Promise<RepositoryEntity | null> {
    return this.store.findForkOf(ownerId, sourceId, tx);
  }

  /** Adds `delta` to a counter inside the caller's transaction; false when the repository is gone. */
  addToCounter(tx: EntityManager, id: number, counter: RepositoryCounter, delta: number): Promise<boolean> {
    return this.store.addToCounter(tx, id, counter, delta);
  }

  /** Changes stored columns of a repository inside the caller's transaction. */
  update(tx: EntityManager, id: number, changes: Partial<RepositoryEntity>): Promise<void> {
    return this.store.update(tx, id, changes);
  }
}
