import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { TeamEntity } from '../users/organization.entities';
import { TeamStore } from './team.store';

/**
 * What other modules may read of teams (review requests of teams, the timeline entries naming them): a team by
 * name in its organisation or by id, whether it reaches a repository, and its members. Never a write.
 */
@Injectable()
export class TeamDirectory {
  constructor(private readonly teams: TeamStore) {}

  /** The organisation's team of that name (case-insensitive), or null. */
  byName(orgId: number, name: string): Promise<TeamEntity | null> {
    return this.teams.findByName(orgId, name);
  }

  /** Teams by id; those that are gone are left out. */
  byIds(ids: number[], tx?: EntityManager): Promise<TeamEntity[]> {
    return this.teams.byIds(
      [...new Set(ids)].filter((id) => id > 0),
      tx,
    );
  }

  /** Whether the team reaches the repository: linked to it, or including every repository of its organisation. */
  reaches(team: TeamEntity, repo: { id: number; ownerId: number }): Promise<boolean> {
    return this.teams.reaches(team, repo);
  }

  memberIds(teamId: number, tx?: EntityManager): Promise<number[]> {
    return this.teams.memberIds(teamId, tx);
  }

  isMember(teamId: number, userId: number, tx?: EntityManager): Promise<boolean> {
    return this.teams.isMember(teamId, userId, tx);
  }
}
