import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { BoundStatements, valueOf } from '../database/bound-statements';
import { isUniqueViolation } from '../database/transactions';
import { OrgUserEntity, OWNER_ACCESS_MODE, TeamEntity, TeamRepoEntity, TeamUserEntity } from './organization.entities';
import { UserEntity, Visibility } from './user.entity';
import { Claims } from '../claims/claims';

/** What removing a member from a team did. */
export type TeamRemoval = 'removed' | 'not-a-member' | 'last-owner';

/** The door to org_user and team_user (membership of organisations and their teams), and the Owners team. */
@Injectable()
export class OrganizationStore {
  private readonly statements: BoundStatements;

  constructor(
    private readonly dataSource: DataSource,
    private readonly claims: Claims,
  ) {
    this.statements = new BoundStatements(dataSource);
  }

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

  /**
   * The organisations `uid` owns (a member of their Owners team) and those they belong to, in one read with
   * bound values: every signed-in request that checks repository access asks it.
   */
  async orgIdsOf(uid: number): Promise<{ owned: number[]; member: number[] }> {
    const table = (entity: Function) => this.dataSource.driver.escape(this.dataSource.getMetadata(entity).tableName);
    this.orgIdsSql ??=
      `SELECT DISTINCT 1 AS owned, tu.org_id AS org_id FROM ${table(TeamUserEntity)} tu JOIN ${table(TeamEntity)} t ON t.id = tu.team_id ` +
      `WHERE tu.uid = ? AND t.authorize = ? UNION ALL SELECT 0 AS owned, ou.org_id AS org_id FROM ${table(OrgUserEntity)} ou WHERE ou.uid = ?`;
    const set = await this.statements.rows(this.orgIdsSql, [uid, OWNER_ACCESS_MODE, uid]);
    const ids = { owned: [] as number[], member: [] as number[] };
    set.rows.forEach((_, index) => (Number(valueOf(set, index, 'owned')) === 1 ? ids.owned : ids.member).push(Number(valueOf(set, index, 'org_id'))));
    return ids;
  }

  private orgIdsSql?: string;

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

  findTeamById(id: number): Promise<TeamEntity | null> {
    return this.manager().getRepository(TeamEntity).findOneBy({ id });
  }

  async listTeams(orgId: number, page: PageQuery): Promise<Page<TeamEntity>> {
    const [items, total] = await this.manager()
      .getRepository(TeamEntity)
      .findAndCount({ where: { orgId }, order: { id: 'ASC' }, skip: page.offset, take: page.limit });
    return { items, total };
  }

  /** The members of an organisation (only those whose membership is public with `publicOnly`), in the order they joined. */
  async listMembers(orgId: number, publicOnly: boolean, page: PageQuery): Promise<Page<UserEntity>> {
    const query = this.manager()
      .getRepository(UserEntity)
      .createQueryBuilder('u')
      .innerJoin(OrgUserEntity, 'ou', 'ou.uid = u.id')
      .where('ou.org_id = :orgId', { orgId });
    if (publicOnly) query.andWhere('ou.is_public = :public', { public: true });
    const [items, total] = await query.orderBy('ou.id', 'ASC').offset(page.offset).limit(page.limit).getManyAndCount();
    return { items, total };
  }

  async isPublicMember(orgId: number, uid: number): Promise<boolean> {
    return this.manager()
      .getRepository(OrgUserEntity)
      .exists({ where: { orgId, uid, isPublic: true } });
  }

  /** Makes a membership public or private; nothing for a non-member. */
  async setMembershipPublic(orgId: number, uid: number, isPublic: boolean): Promise<void> {
    await this.manager().getRepository(OrgUserEntity).update({ orgId, uid }, { isPublic });
  }

  /**
   * Adds `uid` to the team (and to the organisation), inside the caller's transaction. Returns false,
   * changing nothing, when the user is already in the team; `num_members` changes only on a real insert.
   */
  async addTeamMember(tx: EntityManager, team: TeamEntity, uid: number): Promise<boolean> {
    await this.lockMembership(tx, team.orgId, uid, true);
    try {
      await tx.getRepository(TeamUserEntity).insert({ orgId: team.orgId, teamId: team.id, uid });
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
    await tx
      .createQueryBuilder()
      .update(TeamEntity)
      .set({ numMembers: () => 'num_members + 1' })
      .where('id = :id', { id: team.id })
      .execute();
    return true;
  }

  /**
   * Orders the transaction after every other that changes the teams of a member of the organisation, then
   * creates the user's membership (org_user) with `create`. Adding someone to one team and removing them from
   * their last other team thus run one after the other, and the membership ends as their teams say. The order
   * comes from a write to one shared row (Claims.serialize), not a locking read, which a Galera cluster holds
   * on one node only; SQLite runs one write transaction at a time and needs neither.
   */
  private async lockMembership(tx: EntityManager, orgId: number, uid: number, create: boolean): Promise<void> {
    if (this.dataSource.options.type !== 'better-sqlite3') await this.claims.serialize(tx, `org-membership:${orgId}`);
    if (!create || (await tx.getRepository(OrgUserEntity).countBy({ orgId, uid })) > 0) return;
    try {
      await tx.getRepository(OrgUserEntity).insert({ orgId, uid, isPublic: false });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
  }

  /**
   * Removes `uid` from the team, inside the caller's transaction, and from the organisation when it was
   * their last team there. Refuses ('last-owner') to empty an Owners team: the guarded decrement locks the
   * team row, so two concurrent removals of the last two owners cannot both succeed. On 'last-owner' the
   * caller must abort the transaction (the membership row is already deleted).
   */
  async removeTeamMember(tx: EntityManager, team: TeamEntity, uid: number): Promise<TeamRemoval> {
    await this.lockMembership(tx, team.orgId, uid, false);
    const deleted = await tx.getRepository(TeamUserEntity).delete({ teamId: team.id, uid });
    if (!deleted.affected) return 'not-a-member';
    const guard = team.authorize === OWNER_ACCESS_MODE ? 'num_members > 1' : 'num_members > 0';
    const updated = await tx
      .createQueryBuilder()
      .update(TeamEntity)
      .set({ numMembers: () => 'num_members - 1' })
      .where(`id = :id AND ${guard}`, { id: team.id })
      .execute();
    if (!updated.affected) return 'last-owner';
    await this.leaveWhenInNoTeam(tx, team.orgId, uid);
    return 'removed';
  }

  /** Ends the user's membership of the organisation when no team of it holds them (membership locked). */
  private async leaveWhenInNoTeam(tx: EntityManager, orgId: number, uid: number): Promise<void> {
    if ((await tx.getRepository(TeamUserEntity).countBy({ orgId, uid })) === 0) await tx.getRepository(OrgUserEntity).delete({ orgId, uid });
  }

  /**
   * Removes every member of a team being deleted, inside the deleting transaction; those left in no team of
   * the organisation leave it.
   */
  async removeAllTeamMembers(tx: EntityManager, team: TeamEntity): Promise<void> {
    const members = (await tx.getRepository(TeamUserEntity).find({ where: { teamId: team.id }, order: { uid: 'ASC' } })).map((row) => row.uid);
    for (const uid of members) await this.lockMembership(tx, team.orgId, uid, false);
    await tx.getRepository(TeamUserEntity).delete({ teamId: team.id });
    for (const uid of members) await this.leaveWhenInNoTeam(tx, team.orgId, uid);
  }

  /** Removes `uid` from every team of the organisation and from the organisation itself (see removeTeamMember). */
  async removeFromOrganization(tx: EntityManager, orgId: number, uid: number): Promise<TeamRemoval> {
    let removed = false;
    for (const team of await this.teamsOfMember(orgId, uid, tx)) {
      const result = await this.removeTeamMember(tx, team, uid);
      if (result === 'last-owner') return result;
      removed ||= result === 'removed';
    }
    const deleted = await tx.getRepository(OrgUserEntity).delete({ orgId, uid });
    return removed || deleted.affected ? 'removed' : 'not-a-member';
  }

  /**
   * The organisations `uid` belongs to, by name: all of them with `includePrivate`, else only public
   * organisations where the membership is public (as Forgejo lists another user's organisations).
   */
  async listOrganizationsOf(uid: number, includePrivate: boolean, page: PageQuery): Promise<Page<UserEntity>> {
    const query = this.manager()
      .getRepository(UserEntity)
      .createQueryBuilder('u')
      .innerJoin(OrgUserEntity, 'ou', 'ou.org_id = u.id')
      .where('ou.uid = :uid', { uid });
    if (!includePrivate) query.andWhere('ou.is_public = 1 AND u.visibility = :public', { public: Visibility.Public });
    const [items, total] = await query.orderBy('u.lower_name', 'ASC').offset(page.offset).limit(page.limit).getManyAndCount();
    return { items, total };
  }

  /**
   * What `uid`'s teams in the organisation grant: the highest access mode (0 none … 4 owner) and whether one
   * of them may create repositories.
   */
  async grantsOf(orgId: number, uid: number): Promise<{ accessMode: number; canCreateRepository: boolean }> {
    const teams = await this.teamsOfMember(orgId, uid);
    return {
      accessMode: teams.reduce((best, team) => Math.max(best, team.authorize), 0),
      canCreateRepository: teams.some((team) => team.canCreateOrgRepo || team.authorize === OWNER_ACCESS_MODE),
    };
  }

  /** The teams of an organisation that `uid` is in. */
  teamsOfMember(orgId: number, uid: number, tx?: EntityManager): Promise<TeamEntity[]> {
    return this.manager(tx)
      .getRepository(TeamEntity)
      .createQueryBuilder('team')
      .innerJoin(TeamUserEntity, 'tu', 'tu.team_id = team.id')
      .where('tu.org_id = :orgId AND tu.uid = :uid', { orgId, uid })
      .orderBy('team.id', 'ASC')
      .getMany();
  }

  /** Removes an organisation's teams and memberships, inside the transaction that deletes it. */
  async deleteOrganizationRows(tx: EntityManager, orgId: number): Promise<void> {
    await tx.getRepository(TeamUserEntity).delete({ orgId });
    await tx.getRepository(TeamRepoEntity).delete({ orgId });
    await tx.getRepository(TeamEntity).delete({ orgId });
    await tx.getRepository(OrgUserEntity).delete({ orgId });
  }

  /** Removes a deleted user from every team and organisation, fixing the teams' member counts. */
  async removeAllMembershipsOf(tx: EntityManager, uid: number): Promise<void> {
    await tx.query('UPDATE team SET num_members = num_members - 1 WHERE id IN (SELECT team_id FROM team_user WHERE uid = ?)', [uid]);
    await tx.getRepository(TeamUserEntity).delete({ uid });
    await tx.getRepository(OrgUserEntity).delete({ uid });
  }
}
