import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { QuotaGroupEntity, QuotaGroupMappingEntity, QuotaGroupRuleEntity, QuotaRuleEntity } from './quota.entities';

/** A rule as the quota module speaks it: subjects decoded. */
export interface QuotaRule {
  id: number;
  name: string;
  limit: number;
  subjects: string[];
}

/** A group with its rules, in the order they were added. */
export interface QuotaGroupWithRules {
  id: number;
  name: string;
  rules: QuotaRule[];
}

export function toQuotaRule(row: QuotaRuleEntity): QuotaRule {
  return { id: row.id, name: row.name, limit: row.limit, subjects: JSON.parse(row.subjects) as string[] };
}

/** The only door to the quota tables. */
@Injectable()
export class QuotaStore {
  constructor(private readonly dataSource: DataSource) {}

  private manager(tx?: EntityManager): EntityManager {
    return tx ?? this.dataSource.manager;
  }

  async findRule(name: string, tx?: EntityManager): Promise<QuotaRule | null> {
    const row = await this.manager(tx).getRepository(QuotaRuleEntity).findOneBy({ name });
    return row ? toQuotaRule(row) : null;
  }

  async listRules(page: PageQuery): Promise<Page<QuotaRule>> {
    const [rows, total] = await this.manager()
      .getRepository(QuotaRuleEntity)
      .findAndCount({ order: { id: 'ASC' }, skip: page.offset, take: page.limit });
    return { items: rows.map(toQuotaRule), total };
  }

  async insertRule(tx: EntityManager, rule: { name: string; limit: number; subjects: string[] }): Promise<QuotaRule> {
    const repository = tx.getRepository(QuotaRuleEntity);
    const row = await repository.save(repository.create({ name: rule.name, limit: rule.limit, subjects: JSON.stringify(rule.subjects) }));
    return toQuotaRule(row);
  }

  async updateRule(tx: EntityManager, id: number, changes: { limit?: number; subjects?: string[] }): Promise<void> {
    const update: Partial<QuotaRuleEntity> = {};
    if (changes.limit !== undefined) update.limit = changes.limit;
    if (changes.subjects !== undefined) update.subjects = JSON.stringify(changes.subjects);
    if (Object.keys(update).length > 0) await tx.getRepository(QuotaRuleEntity).update({ id }, update);
  }

  /** The rule and every link to it, in the caller's transaction. False when it was already gone. */
  async deleteRule(tx: EntityManager, id: number): Promise<boolean> {
    const result = await tx.getRepository(QuotaRuleEntity).delete({ id });
    await tx.getRepository(QuotaGroupRuleEntity).delete({ ruleId: id });
    return (result.affected ?? 0) > 0;
  }

  async findGroup(name: string, tx?: EntityManager): Promise<QuotaGroupEntity | null> {
    return this.manager(tx).getRepository(QuotaGroupEntity).findOneBy({ name });
  }

  async findGroupsByNames(names: string[], tx?: EntityManager): Promise<QuotaGroupEntity[]> {
    if (names.length === 0) return [];
    return this.manager(tx)
      .getRepository(QuotaGroupEntity)
      .find({ where: { name: In(names) }, order: { id: 'ASC' } });
  }

  async listGroups(page: PageQuery): Promise<Page<QuotaGroupWithRules>> {
    const [rows, total] = await this.manager()
      .getRepository(QuotaGroupEntity)
      .findAndCount({ order: { id: 'ASC' }, skip: page.offset, take: page.limit });
    return { items: await this.withRules(rows), total };
  }

  insertGroup(tx: EntityManager, name: string): Promise<QuotaGroupEntity> {
    const repository = tx.getRepository(QuotaGroupEntity);
    return repository.save(repository.create({ name }));
  }

  /** The group, its rule links and its user mappings. False when it was already gone. */
  async deleteGroup(tx: EntityManager, id: number): Promise<boolean> {
    const result = await tx.getRepository(QuotaGroupEntity).delete({ id });
    await tx.getRepository(QuotaGroupRuleEntity).delete({ groupId: id });
    await tx.getRepository(QuotaGroupMappingEntity).delete({ groupId: id });
    return (result.affected ?? 0) > 0;
  }

  /** The rules of each group, in the order they were added to it; groups in the order given. */
  async withRules(groups: QuotaGroupEntity[], tx?: EntityManager): Promise<QuotaGroupWithRules[]> {
    if (groups.length === 0) return [];
    const sql = this.groupsWithRulesSql('FROM quota_group g', `g.id IN (${groups.map(() => '?').join(', ')})`);
    const loaded = new Map(
      groupsFromRows(
        await this.manager(tx).query(
          sql,
          groups.map((group) => group.id),
        ),
      ).map((group) => [group.id, group]),
    );
    return groups.map((group) => loaded.get(group.id) ?? { id: group.id, name: group.name, rules: [] });
  }

  /** True when the link was added, false when the rule was already in the group. */
  async addRuleToGroup(tx: EntityManager, groupId: number, ruleId: number): Promise<boolean> {
    const repository = tx.getRepository(QuotaGroupRuleEntity);
    if (await repository.existsBy({ groupId, ruleId })) return false;
    await repository.insert({ groupId, ruleId });
    return true;
  }

  async removeRuleFromGroup(tx: EntityManager, groupId: number, ruleId: number): Promise<boolean> {
    const result = await tx.getRepository(QuotaGroupRuleEntity).delete({ groupId, ruleId });
    return (result.affected ?? 0) > 0;
  }

  /** One page of the ids of the users and organisations mapped to a group, ascending. */
  async targetIdsOfGroup(groupId: number, page: PageQuery): Promise<Page<number>> {
    const [rows, total] = await this.manager()
      .getRepository(QuotaGroupMappingEntity)
      .findAndCount({ where: { groupId }, order: { targetId: 'ASC' }, skip: page.offset, take: page.limit });
    return { items: rows.map((row) => row.targetId), total };
  }

  /** True when the mapping was added, false when the target was already in the group. */
  async addMapping(tx: EntityManager, groupId: number, targetId: number): Promise<boolean> {
    const repository = tx.getRepository(QuotaGroupMappingEntity);
    if (await repository.existsBy({ groupId, targetId })) return false;
    await repository.insert({ groupId, targetId });
    return true;
  }

  async removeMapping(tx: EntityManager, groupId: number, targetId: number): Promise<boolean> {
    const result = await tx.getRepository(QuotaGroupMappingEntity).delete({ groupId, targetId });
    return (result.affected ?? 0) > 0;
  }

  /** Replaces the explicit groups of a target with exactly `groupIds`. */
  async replaceMappings(tx: EntityManager, targetId: number, groupIds: number[]): Promise<void> {
    await tx.getRepository(QuotaGroupMappingEntity).delete({ targetId });
    if (groupIds.length > 0) await tx.getRepository(QuotaGroupMappingEntity).insert(groupIds.map((groupId) => ({ groupId, targetId })));
  }

  async deleteMappingsOf(tx: EntityManager, targetId: number): Promise<void> {
    await tx.getRepository(QuotaGroupMappingEntity).delete({ targetId });
  }

  /**
   * The groups a target is explicitly mapped to, each with its rules, in one statement with the value bound (the
   * hot path of every quota check): mapping → group → links → rules.
   */
  async explicitGroupsOf(targetId: number): Promise<QuotaGroupWithRules[]> {
    this.explicitGroupsSql ??= this.groupsWithRulesSql('FROM quota_group_mapping m INNER JOIN quota_group g ON g.id = m.group_id', 'm.target_id = ?');
    return groupsFromRows(await this.dataSource.query(this.explicitGroupsSql, [targetId]));
  }

  /** The existing groups among `names`, with their rules, by id. */
  async groupsNamed(names: string[]): Promise<QuotaGroupWithRules[]> {
    if (names.length === 0) return [];
    const sql = this.groupsNamedSql.get(names.length) ?? this.groupsWithRulesSql('FROM quota_group g', `g.name IN (${names.map(() => '?').join(', ')})`);
    this.groupsNamedSql.set(names.length, sql);
    return groupsFromRows(await this.dataSource.query(sql, names));
  }

  private explicitGroupsSql?: string;
  private readonly groupsNamedSql = new Map<number, string>();

  /**
   * Groups (alias `g`, from `from`, filtered by `where`) with their rules joined. Unordered: an ORDER BY across
   * the joined tables costs MariaDB a temporary table and a filesort on every quota check, for a handful of
   * rows that groupsFromRows puts in order (by group id, rules in link order).
   */
  private groupsWithRulesSql(from: string, where: string): string {
    return (
      'SELECT g.id AS group_id, g.name AS group_name, gr.id AS link_id, r.id AS rule_id, r.name AS rule_name, r.limit_bytes AS rule_limit, r.subjects AS rule_subjects ' +
      `${from} LEFT JOIN quota_group_rule gr ON gr.group_id = g.id LEFT JOIN quota_rule r ON r.id = gr.rule_id WHERE ${where}`
    );
  }
}

/** Rows of groupsWithRulesSql as groups by id, each with its rules in link order, rules decoded. */
export function groupsFromRows(rows: RawGroupRule[]): QuotaGroupWithRules[] {
  const groups = new Map<number, QuotaGroupWithRules>();
  const ordered = rows.length > 1 ? [...rows].sort((a, b) => Number(a.group_id) - Number(b.group_id) || Number(a.link_id ?? 0) - Number(b.link_id ?? 0)) : rows;
  for (const row of ordered) {
    const groupId = Number(row.group_id);
    let group = groups.get(groupId);
    if (!group) groups.set(groupId, (group = { id: groupId, name: row.group_name, rules: [] }));
    if (row.rule_id !== null && row.rule_id !== undefined) {
      group.rules.push({ id: Number(row.rule_id), name: row.rule_name!, limit: Number(row.rule_limit), subjects: JSON.parse(row.rule_subjects!) as string[] });
    }
  }
  return [...groups.values()];
}

export interface RawGroupRule {
  group_id: number | string;
  group_name: string;
  link_id: number | string | null;
  rule_id: number | string | null;
  rule_name: string | null;
  rule_limit: number | string | null;
  rule_subjects: string | null;
}
