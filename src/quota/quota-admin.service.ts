import { AuditService } from '../audit/audit.service';
import { Injectable } from '@nestjs/common';
import { Claims } from '../claims/claims';
import { EntityManager } from 'typeorm';
import { ConflictError, InvalidInputError, NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { isUniqueViolation, Transactions } from '../database/transactions';
import { UserEntity } from '../users/user.entity';
import { UserAccounts } from '../users/user-accounts';
import { QuotaEngine, QuotaState } from './quota.engine';
import { InlineRule } from './quota.options';
import { QuotaGroupEntity } from './quota.entities';
import { QuotaGroupWithRules, QuotaRule, QuotaStore } from './quota.store';

/** The version every change of rules, groups and mappings advances. */
export const QUOTA_SETTINGS = 'quota-settings';

const ruleExists = (name: string) => new ConflictError(`rule already exists: [name: ${name}]`);
const groupExists = (name: string) => new ConflictError(`group already exists: [name: ${name}]`);

/**
 * Administration of quota rules, groups and mappings (docs/quota.md). Every change runs in one transaction that first
 * advances one shared version (Claims.serialize): changes are ordered across instances and database nodes, and
 * each reads what the one before it committed, so that a concurrent deletion never leaves a link to a missing
 * rule or group.
 */
@Injectable()
export class QuotaAdminService {
  constructor(
    private readonly store: QuotaStore,
    private readonly engine: QuotaEngine,
    private readonly users: UserAccounts,
    private readonly transactions: Transactions,
    private readonly claims: Claims,
    private readonly audit: AuditService,
  ) {}

  /** One change of the quota settings, ordered after every other (see above). */
  private change<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.transactions.run(async (tx) => {
      await this.claims.serialize(tx, QUOTA_SETTINGS);
      return work(tx);
    });
  }

  listRules(page: PageQuery): Promise<Page<QuotaRule>> {
    return this.store.listRules(page);
  }

  async getRule(name: string): Promise<QuotaRule> {
    return (await this.store.findRule(name)) ?? notFound();
  }

  /** The body is already checked (422); the name is looked up last (409), and a lost race is a 409 too. */
  async createRule(rule: InlineRule): Promise<QuotaRule> {
    try {
      return await this.change(async (tx) => {
        if (await this.store.findRule(rule.name, tx)) throw ruleExists(rule.name);
        const created = await this.store.insertRule(tx, rule);
        await this.audit.record(tx, { action: 'quota.rule_create', target: ruleTarget(created), detail: ruleFacts(created) });
        return created;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw ruleExists(rule.name);
      throw error;
    }
  }

  /** PATCH /admin/quota/rules/{name}, once the controller found the rule (404) and then bound the body (422), as Forgejo. */
  async editRule(name: string, changes: { limit?: number; subjects?: string[] }): Promise<QuotaRule> {
    return this.change(async (tx) => {
      const rule = (await this.store.findRule(name, tx)) ?? notFound();
      await this.store.updateRule(tx, rule.id, changes);
      const updated = (await this.store.findRule(name, tx))!;
      await this.audit.record(tx, { action: 'quota.rule_edit', target: ruleTarget(updated), detail: ruleFacts(updated) });
      return updated;
    });
  }

  /** The rule and its links to every group go together. */
  async deleteRule(name: string): Promise<void> {
    await this.change(async (tx) => {
      const rule = (await this.store.findRule(name, tx)) ?? notFound();
      await this.store.deleteRule(tx, rule.id);
      await this.audit.record(tx, { action: 'quota.rule_delete', target: ruleTarget(rule) });
    });
  }

  listGroups(page: PageQuery): Promise<Page<QuotaGroupWithRules>> {
    return this.store.listGroups(page);
  }

  async getGroup(name: string): Promise<QuotaGroupWithRules> {
    const group = (await this.store.findGroup(name)) ?? notFound();
    return (await this.store.withRules([group]))[0];
  }

  /**
   * One transaction: the group, the listed rules that do not exist yet (an existing rule is attached as it
   * is), and the links, each rule once. If a listed rule is created concurrently, the whole creation runs
   * once more and then attaches it.
   */
  async createGroup(name: string, rules: InlineRule[]): Promise<QuotaGroupWithRules> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.change((tx) => this.insertGroup(tx, name, rules));
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        if (attempt >= 2 || (await this.store.findGroup(name))) throw groupExists(name);
      }
    }
  }

  private async insertGroup(tx: EntityManager, name: string, rules: InlineRule[]): Promise<QuotaGroupWithRules> {
    if (await this.store.findGroup(name, tx)) throw groupExists(name);
    const group = await this.store.insertGroup(tx, name);
    const attached = new Set<number>();
    for (const listed of rules) {
      const rule = (await this.store.findRule(listed.name, tx)) ?? (await this.store.insertRule(tx, listed));
      if (attached.has(rule.id)) continue;
      attached.add(rule.id);
      await this.store.addRuleToGroup(tx, group.id, rule.id);
    }
    const created = (await this.store.withRules([group], tx))[0];
    await this.audit.record(tx, {
      action: 'quota.group_create',
      target: { type: 'quota_group', id: group.id, name },
      detail: { rules: created.rules.map((rule) => rule.name) },
    });
    return created;
  }

  async deleteGroup(name: string): Promise<void> {
    await this.change(async (tx) => {
      const group = (await this.store.findGroup(name, tx)) ?? notFound();
      await this.store.deleteGroup(tx, group.id);
      await this.audit.record(tx, { action: 'quota.group_delete', target: { type: 'quota_group', id: group.id, name: group.name } });
    });
  }

  async addRuleToGroup(groupName: string, ruleName: string): Promise<void> {
    const conflict = () => new ConflictError(`rule already in group: [group: ${groupName}, rule: ${ruleName}]`);
    try {
      await this.change(async (tx) => {
        const group = (await this.store.findGroup(groupName, tx)) ?? notFound();
        const rule = (await this.store.findRule(ruleName, tx)) ?? notFound();
        if (!(await this.store.addRuleToGroup(tx, group.id, rule.id))) throw conflict();
        await this.audit.record(tx, {
          action: 'quota.group_rule_add',
          target: { type: 'quota_group', id: group.id, name: group.name },
          detail: { rule: rule.name },
        });
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict();
      throw error;
    }
  }

  async removeRuleFromGroup(groupName: string, ruleName: string): Promise<void> {
    await this.change(async (tx) => {
      const group = (await this.store.findGroup(groupName, tx)) ?? notFound();
      const rule = (await this.store.findRule(ruleName, tx)) ?? notFound();
      if (!(await this.store.removeRuleFromGroup(tx, group.id, rule.id))) notFound();
      await this.audit.record(tx, {
        action: 'quota.group_rule_remove',
        target: { type: 'quota_group', id: group.id, name: group.name },
        detail: { rule: rule.name },
      });
    });
  }

  /** Users and organisations of a group, ascending id. */
  async usersInGroup(groupName: string, page: PageQuery): Promise<Page<UserEntity>> {
    const group = (await this.store.findGroup(groupName)) ?? notFound();
    const ids = await this.store.targetIdsOfGroup(group.id, page);
    const found = new Map((await this.users.byIds(ids.items)).map((user) => [user.id, user]));
    return { items: ids.items.flatMap((id) => found.get(id) ?? []), total: ids.total };
  }

  async addUserToGroup(groupName: string, username: string): Promise<void> {
    const { group, user } = await this.groupAndUser(groupName, username);
    const conflict = () => new ConflictError(`user already in group: [group: ${group.name}, userID: ${user.id}]`);
    try {
      await this.change(async (tx) => {
        const locked = (await this.store.findGroup(group.name, tx)) ?? notFound();
        if (!(await this.store.addMapping(tx, locked.id, user.id))) throw conflict();
        await this.audit.record(tx, {
          action: 'quota.group_user_add',
          target: { type: 'quota_group', id: locked.id, name: locked.name },
          detail: { user: user.name },
        });
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict();
      throw error;
    }
  }

  async removeUserFromGroup(groupName: string, username: string): Promise<void> {
    const { group, user } = await this.groupAndUser(groupName, username);
    await this.change(async (tx) => {
      if (!(await this.store.removeMapping(tx, group.id, user.id))) notFound();
      await this.audit.record(tx, {
        action: 'quota.group_user_remove',
        target: { type: 'quota_group', id: group.id, name: group.name },
        detail: { user: user.name },
      });
    });
  }

  /** The user of a /admin/users/{username}/quota route, before its body is read: unknown → 404. */
  async assertUserExists(username: string): Promise<void> {
    if (!(await this.users.byName(username))) notFound();
  }

  /**
   * POST /admin/users/{username}/quota/groups, once the controller found the user (404) and then bound the body:
   * an unknown group is a 422 and nothing changes; absent or null `groups` changes nothing; duplicates count once.
   */
  async setUserGroups(username: string, names: string[] | null | undefined): Promise<void> {
    const user = (await this.users.byName(username)) ?? notFound();
    if (names === undefined || names === null) return;
    const unique = [...new Set(names)];
    await this.change(async (tx) => {
      const groups = await this.store.findGroupsByNames(unique, tx);
      const byName = new Map(groups.map((group) => [group.name, group]));
      const missing = unique.find((name) => !byName.has(name));
      if (missing !== undefined) throw new InvalidInputError(`group not found: [group: ${missing}]`);
      await this.store.replaceMappings(
        tx,
        user.id,
        groups.map((group) => group.id),
      );
      await this.audit.record(tx, {
        action: 'quota.group_user_add',
        target: { type: 'user', id: user.id, name: user.name },
        detail: { groups: groups.map((group) => group.name), replaced: true },
      });
    });
  }

  /** GET /admin/users/{username}/quota (docs/quota.md): a user or an organisation. */
  async userQuota(username: string): Promise<QuotaState> {
    const user = (await this.users.byName(username)) ?? notFound();
    return this.engine.state(user.id);
  }

  /** Lookups in Forgejo's order: group (404), then user (404). */
  private async groupAndUser(groupName: string, username: string): Promise<{ group: QuotaGroupEntity; user: UserEntity }> {
    const group = (await this.store.findGroup(groupName)) ?? notFound();
    const user = (await this.users.byName(username)) ?? notFound();
    return { group, user };
  }
}

function notFound(): never {
  throw new NotFoundError();
}

function ruleTarget(rule: QuotaRule) {
  return { type: 'quota_rule' as const, id: rule.id, name: rule.name };
}

function ruleFacts(rule: QuotaRule) {
  return { limit: rule.limit, subjects: rule.subjects };
}
