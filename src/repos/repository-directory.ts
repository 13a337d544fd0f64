import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { UserEntity } from '../users/user.entity';
import { RepositoryEntity } from './repository.entity';
import { RepositoryStore } from './repository.store';

/**
 * What other modules read and change of repository rows (mirrors, releases, teams, language statistics,
 * and RepositoryAssignment, which Nest builds in the module of each controller that uses it). RepositoryStore
 * stays inside the repos module; each method is the one statement it delegates to, returned as it is (no
 * extra query, no extra await).
 */
@Injectable()
export class RepositoryDirectory {
  constructor(private readonly store: RepositoryStore) {}

  byId(id: number, tx?: EntityManager): Promise<RepositoryEntity | null> {
    return this.store.findById(id, tx);
  }

  /** Case-insensitive lookup by owner and name. */
  byOwnerAndName(ownerId: number, name: string, tx?: EntityManager): Promise<RepositoryEntity | null> {
    return this.store.findByOwnerAndName(ownerId, name, tx);
  }

  /** A repository and its owner by their names (case-insensitive), in one read. */
  withOwnerByNames(ownerName: string, repoName: string): Promise<{ repo: RepositoryEntity; owner: UserEntity } | null> {
    return this.store.findWithOwnerByNames(ownerName, repoName);
  }

  /** Changes stored columns of a repository inside the caller's transaction. */
  update(tx: EntityManager, id: number, changes: Partial<RepositoryEntity>): Promise<void> {
    return this.store.update(tx, id, changes);
  }
}
