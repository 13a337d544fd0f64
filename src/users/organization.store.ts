import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { OrgUserEntity, OWNER_ACCESS_MODE, TeamEntity, TeamUserEntity } from './organization.entities';

/** The only door to org_user, team and team_user. Anvil's only team is each organisation's Owners team. */
@Injectable()
export class OrganizationStore {
  constructor(private readonly dataSource: DataSource) {}

  private manager(tx?: EntityManager): EntityManager {
    return tx ?? this.dataSource.manager;
  }

  async isMember(orgId: number, uid: number): Promise<boolean> {
    return (await this.manager().getRepository(OrgUserEntity).countBy({ orgId, uid })) > 0;
  }

  /** Owner = member of the org's Owners team. */
  async isOwner(orgId: number, uid: number, tx?: EntityManager): Promise<boolean> {
    const count = await this.manager(tx)
      .getRepository(TeamUserEntity)
      .createQueryBuilder('tu')
      .innerJoin(TeamEntity, 'team', 'team.id = tu.team_id')
      .where('tu.org_id = :orgId AND tu.uid = :uid AND team.authorize = :owner', { orgId, uid, owner: OWNER_ACCESS_MODE })
      .getCount();
    return count > 0;
  }

  /** Ids of the organisations where `uid` is an owner. */
  async ownedOrgIds(uid: number): Promise<number[]> {
    const rows = await this.manager()
      .getRepository(TeamUserEntity)
      .createQueryBuilder('tu')
      .innerJoin(TeamEntity, 'team', 'team.id = tu.team_id')
      .select('DISTINCT tu.org_id', 'orgId')
      .where('tu.uid = :uid AND team.authorize = :owner', { uid, owner: OWNER_ACCESS_MODE })
      .getRawMany<{ orgId: number | string }>();
    return rows.map((row) => Number(row.orgId));
  }

  /** Ids of the organisations `uid` is a member of. */
  async memberOrgIds(uid: number): Promise<number[]> {
    const rows = await this.manager().getRepository(OrgUserEntity).findBy({ uid });
    return rows.map((row) => row.orgId);
  }

  /**
   * Creates the organisation's Owners team with `ownerId` as its only member, inside the caller's
   * transaction (the organisation's user row must already be inserted).
   */
  async addOwnersTeam(tx: EntityManager, orgId: number, ownerId: number): Promise<TeamEntity> {
    const team = await tx.getRepository(TeamEntity).save(
      tx.getRepository(TeamEntity).create({
        orgId,
        lowerName: 'owners',
        name: 'Owners',
        description: '',
        authorize: OWNER_ACCESS_MODE,
        includesAllRepositories: true,
        canCreateOrgRepo: true,
        numMembers: 1,
      }),
    );
    await tx.getRepository(TeamUserEntity).insert({ orgId, teamId: team.id, uid: ownerId });
    await tx.getRepository(OrgUserEntity).insert({ orgId, uid: ownerId, isPublic: false });
    return team;
  }

  async countOrgsOfMember(uid: number, tx?: EntityManager): Promise<number> {
    return this.manager(tx).getRepository(OrgUserEntity).countBy({ uid });
  }
}
