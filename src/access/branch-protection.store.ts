import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In } from 'typeorm';
import { TeamEntity, TeamRepoEntity, TeamUserEntity } from '../users/organization.entities';
import { BranchProtectionEntity } from './branch-protection.entity';

/** A team as branch protection names it. */
export interface NamedTeam {
  id: number;
  name: string;
}

/**
 * The only door to `protected_branch`, and the team reads the rules need (membership in whitelisted teams, teams
 * by name, teams reaching a repository), read from the teams' tables as the rest of the access policy does.
 */
@Injectable()
export class BranchProtectionStore {
  constructor(private readonly dataSource: DataSource) {}

  private rules(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(BranchProtectionEntity);
  }

  /** Every rule of a repository (one indexed read), in creation order. */
  listOfRepository(repoId: number, tx?: EntityManager): Promise<BranchProtectionEntity[]> {
    return this.rules(tx).find({ where: { repoId }, order: { createdUnix: 'ASC', id: 'ASC' } });
  }

  byName(repoId: number, ruleName: string, tx?: EntityManager): Promise<BranchProtectionEntity | null> {
    return this.rules(tx).findOneBy({ repoId, ruleName });
  }

  insert(tx: EntityManager, rule: Partial<BranchProtectionEntity>): Promise<BranchProtectionEntity> {
    return this.rules(tx).save(this.rules(tx).create(rule));
  }

  async update(tx: EntityManager, rule: BranchProtectionEntity): Promise<void> {
    await this.rules(tx).save(rule);
  }

  async delete(tx: EntityManager, id: number): Promise<void> {
    await this.rules(tx).delete({ id });
  }

  async deleteAllOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    await this.rules(tx).delete({ repoId });
  }

  /** Whether user `uid` is a member of one of `teamIds`. */
  async memberOfAny(uid: number, teamIds: number[]): Promise<boolean> {
    if (teamIds.length === 0) return false;
    return (await this.dataSource.manager.getRepository(TeamUserEntity).countBy({ uid, teamId: In(teamIds) })) > 0;
  }

  /** The ids of the teams of `orgId` that `uid` is a member of. */
  async teamIdsOf(uid: number, orgId: number): Promise<number[]> {
    const rows = await this.dataSource.manager.getRepository(TeamUserEntity).find({ where: { uid, orgId }, select: { teamId: true } });
    return rows.map((row) => row.teamId);
  }

  /** The team of `orgId` named `name` (without regard to case), or null. */
  teamByName(orgId: number, name: string): Promise<NamedTeam | null> {
    return this.dataSource.manager.getRepository(TeamEntity).findOne({ where: { orgId, lowerName: name.toLowerCase() }, select: { id: true, name: true } });
  }

  /** The teams of `orgId` that reach repository `repoId` (all its repositories, or this one). */
  async teamsReaching(orgId: number, repoId: number): Promise<NamedTeam[]> {
    const teams = await this.dataSource.manager
      .getRepository(TeamEntity)
      .find({ where: { orgId }, select: { id: true, name: true, includesAllRepositories: true }, order: { id: 'ASC' } });
    const linked = new Set(
      (await this.dataSource.manager.getRepository(TeamRepoEntity).find({ where: { repoId }, select: { teamId: true } })).map((row) => row.teamId),
    );
    return teams.filter((team) => team.includesAllRepositories || linked.has(team.id)).map((team) => ({ id: team.id, name: team.name }));
  }
}
