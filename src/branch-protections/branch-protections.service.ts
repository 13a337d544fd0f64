import { Injectable } from '@nestjs/common';
import { assertAcceptsWrites } from '../access/access-policy';
import { filePatternsError, globError, isGlob } from '../access/branch-globs';
import type { BranchProtectionEntity } from '../access/branch-protection.entity';
import { BranchProtections } from '../access/branch-protection-policy';
import type { RepositoryTarget } from '../access/repository-policy';
import { BadRequestError, ForbiddenError, InvalidInputError, NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { Clock } from '../common/time';
import { isUniqueViolation, Transactions } from '../database/transactions';
import { UserAccounts } from '../users/user-accounts';
import { toBranchProtectionWire } from './branch-protection.mapper';
import type { CreateBranchProtectionOption, EditBranchProtectionOption } from './branch-protection.options';
import type { BranchProtectionWire } from './branch-protection.wire';

const ALREADY_EXISTS = 'Branch protection already exist';

type Whitelist = 'push' | 'merge' | 'approvals';

/** The ids a request names for each whitelist (undefined: not sent, keep the rule's). */
interface NamedWhitelists {
  users: Record<Whitelist, number[] | undefined>;
  teams: Record<Whitelist, number[] | undefined>;
}

const sameSet = (a: number[], b: number[]) =>
  a.length === b.length && [...a].sort((x, y) => x - y).every((id, index) => id === [...b].sort((x, y) => x - y)[index]);

/**
 * Branch protection rules of a repository, kept by its administrators (Forgejo's create and edit semantics):
 * whitelist flags count only under `enable_push`, lists replace when sent, users without write access and teams
 * that do not reach the repository are dropped from the whitelists. Rule names and file patterns must be valid
 * globs (422). What the rules refuse is the access policy's to say (BranchProtections).
 */
@Injectable()
export class BranchProtectionsService {
  constructor(
    private readonly protections: BranchProtections,
    private readonly users: UserAccounts,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
  ) {}

  async list(target: RepositoryTarget, page: PageQuery): Promise<Page<BranchProtectionWire>> {
    const rules = await this.protections.rulesOf(target.repo.id);
    const items = rules.slice(page.offset, page.offset + page.limit);
    return { items: await this.wires(target, items), total: rules.length };
  }

  async get(target: RepositoryTarget, name: string): Promise<BranchProtectionWire> {
    const rule = await this.protections.ruleByName(target.repo.id, name);
    if (!rule) throw new NotFoundError();
    return (await this.wires(target, [rule]))[0];
  }

  async create(target: RepositoryTarget, option: CreateBranchProtectionOption): Promise<BranchProtectionWire> {
    assertAcceptsWrites(target.repo, target.owner);
    const ruleName = option.rule_name || option.branch_name || '';
    if (ruleName === '') throw new BadRequestError('both rule_name and branch_name are empty');
    assertValidPatterns(ruleName, option.protected_file_patterns, option.unprotected_file_patterns);
    if (await this.protections.ruleByName(target.repo.id, ruleName)) throw new ForbiddenError(ALREADY_EXISTS);
    const named = await this.namedWhitelists(target, option);
    const enablePush = option.enable_push ?? false;
    const enableWhitelist = enablePush && (option.enable_push_whitelist ?? false);
    const now = this.clock.nowUnix();
    const rule: Partial<BranchProtectionEntity> = {
      repoId: target.repo.id,
      ruleName,
      canPush: enablePush,
      enableWhitelist,
      whitelistDeployKeys: enableWhitelist && (option.push_whitelist_deploy_keys ?? false),
      enableMergeWhitelist: option.enable_merge_whitelist ?? false,
      enableStatusCheck: option.enable_status_check ?? false,
      statusCheckContexts: option.status_check_contexts ?? [],
      enableApprovalsWhitelist: option.enable_approvals_whitelist ?? false,
      requiredApprovals: Math.max(0, option.required_approvals ?? 0),
      blockOnRejectedReviews: option.block_on_rejected_reviews ?? false,
      blockOnOfficialReviewRequests: option.block_on_official_review_requests ?? false,
      blockOnOutdatedBranch: option.block_on_outdated_branch ?? false,
      dismissStaleApprovals: option.dismiss_stale_approvals ?? false,
      ignoreStaleApprovals: option.ignore_stale_approvals ?? false,
      requireSignedCommits: option.require_signed_commits ?? false,
      protectedFilePatterns: option.protected_file_patterns ?? '',
      unprotectedFilePatterns: option.unprotected_file_patterns ?? '',
      applyToAdmins: option.apply_to_admins ?? false,
      whitelistUserIds: [],
      whitelistTeamIds: [],
      mergeWhitelistUserIds: [],
      mergeWhitelistTeamIds: [],
      approvalsWhitelistUserIds: [],
      approvalsWhitelistTeamIds: [],
      createdUnix: now,
      updatedUnix: now,
    };
    await this.applyWhitelists(target, rule as BranchProtectionEntity, named);
    let saved: BranchProtectionEntity;
    try {
      saved = await this.transactions.run((tx) => this.protections.insertRule(tx, rule));
    } catch (error) {
      if (isUniqueViolation(error)) throw new ForbiddenError(ALREADY_EXISTS);
      throw error;
    }
    return (await this.wires(target, [saved]))[0];
  }

  async edit(target: RepositoryTarget, name: string, option: EditBranchProtectionOption): Promise<BranchProtectionWire> {
    assertAcceptsWrites(target.repo, target.owner);
    const rule = await this.protections.ruleByName(target.repo.id, name);
    if (!rule) throw new NotFoundError();
    assertValidPatterns(null, option.protected_file_patterns, option.unprotected_file_patterns);
    if (option.enable_push === false) {
      rule.canPush = false;
      rule.enableWhitelist = false;
      rule.whitelistDeployKeys = false;
    } else if (option.enable_push === true) {
      rule.canPush = true;
      if (option.enable_push_whitelist === false) {
        rule.enableWhitelist = false;
        rule.whitelistDeployKeys = false;
      } else if (option.enable_push_whitelist === true) {
        rule.enableWhitelist = true;
        if (option.push_whitelist_deploy_keys !== undefined && option.push_whitelist_deploy_keys !== null)
          rule.whitelistDeployKeys = option.push_whitelist_deploy_keys;
      }
    }
    const set = <K extends keyof BranchProtectionEntity>(key: K, value: BranchProtectionEntity[K] | undefined | null) => {
      if (value !== undefined && value !== null) rule[key] = value;
    };
    set('enableMergeWhitelist', option.enable_merge_whitelist);
    set('enableStatusCheck', option.enable_status_check);
    set('statusCheckContexts', option.status_check_contexts);
    if (typeof option.required_approvals === 'number' && option.required_approvals >= 0) rule.requiredApprovals = option.required_approvals;
    set('enableApprovalsWhitelist', option.enable_approvals_whitelist);
    set('blockOnRejectedReviews', option.block_on_rejected_reviews);
    set('blockOnOfficialReviewRequests', option.block_on_official_review_requests);
    set('dismissStaleApprovals', option.dismiss_stale_approvals);
    set('ignoreStaleApprovals', option.ignore_stale_approvals);
    set('requireSignedCommits', option.require_signed_commits);
    set('protectedFilePatterns', option.protected_file_patterns);
    set('unprotectedFilePatterns', option.unprotected_file_patterns);
    set('blockOnOutdatedBranch', option.block_on_outdated_branch);
    set('applyToAdmins', option.apply_to_admins);
    const named = await this.namedWhitelists(target, option);
    await this.applyWhitelists(target, rule, named);
    rule.updatedUnix = this.clock.nowUnix();
    await this.transactions.run((tx) => this.protections.updateRule(tx, rule));
    return (await this.wires(target, [rule]))[0];
  }

  async delete(target: RepositoryTarget, name: string): Promise<void> {
    const rule = await this.protections.ruleByName(target.repo.id, name);
    if (!rule) throw new NotFoundError();
    assertAcceptsWrites(target.repo, target.owner);
    await this.transactions.run((tx) => this.protections.deleteRule(tx, rule.id));
  }

  /** The ids of the users and teams a request names (422 for an unknown name, as Forgejo words it). */
  private async namedWhitelists(target: RepositoryTarget, option: CreateBranchProtectionOption | EditBranchProtectionOption): Promise<NamedWhitelists> {
    const userIds = async (names: string[] | null | undefined): Promise<number[] | undefined> => {
      if (names === undefined || names === null) return undefined;
      const ids: number[] = [];
      for (const name of names) {
        const user = await this.users.byName(name);
        if (!user || user.isOrganization) throw new InvalidInputError(`user does not exist [uid: 0, name: ${name}]`);
        ids.push(user.id);
      }
      return ids;
    };
    const teamIds = async (names: string[] | null | undefined): Promise<number[] | undefined> => {
      if (!target.owner.isOrganization) return names === undefined || names === null ? undefined : [];
      if (names === undefined || names === null) return undefined;
      const ids: number[] = [];
      for (const name of names) {
        const team = await this.protections.teamByName(target.owner.id, name);
        if (!team) throw new InvalidInputError(`team does not exist [org_id ${target.owner.id}, team_id 0, name: ${name}]`);
        ids.push(team.id);
      }
      return ids;
    };
    return {
      users: {
        push: await userIds(option.push_whitelist_usernames),
        merge: await userIds(option.merge_whitelist_usernames),
        approvals: await userIds(option.approvals_whitelist_username),
      },
      teams: {
        push: await teamIds(option.push_whitelist_teams),
        merge: await teamIds(option.merge_whitelist_teams),
        approvals: await teamIds(option.approvals_whitelist_teams),
      },
    };
  }

  /**
   * Lists that changed are replaced by the named ids the repository accepts: users who may write code
   * (approvals: users who may read it), teams of the owning organisation that reach the repository.
   */
  private async applyWhitelists(target: RepositoryTarget, rule: BranchProtectionEntity, named: NamedWhitelists): Promise<void> {
    const teams = target.owner.isOrganization
      ? new Set((await this.protections.teamsReaching(target.owner.id, target.repo.id)).map((team) => team.id))
      : new Set<number>();
    const users = async (current: number[], wanted: number[] | undefined, readersSuffice = false): Promise<number[]> => {
      if (wanted === undefined || sameSet(current, wanted)) return current;
      const kept: number[] = [];
      for (const user of await this.users.byIds(wanted)) {
        const stays = readersSuffice
          ? this.protections.canReadCode(user, target.repo, target.owner)
          : this.protections.canWriteCode(user, target.repo, target.owner);
        if (await stays) kept.push(user.id);
      }
      return wanted.filter((id) => kept.includes(id));
    };
    const teamList = (current: number[], wanted: number[] | undefined): number[] => {
      if (wanted === undefined || sameSet(current, wanted)) return current;
      return wanted.filter((id) => teams.has(id));
    };
    rule.whitelistUserIds = await users(rule.whitelistUserIds, named.users.push);
    rule.mergeWhitelistUserIds = await users(rule.mergeWhitelistUserIds, named.users.merge);
    rule.approvalsWhitelistUserIds = await users(rule.approvalsWhitelistUserIds, named.users.approvals, true);
    rule.whitelistTeamIds = teamList(rule.whitelistTeamIds, named.teams.push);
    rule.mergeWhitelistTeamIds = teamList(rule.mergeWhitelistTeamIds, named.teams.merge);
    rule.approvalsWhitelistTeamIds = teamList(rule.approvalsWhitelistTeamIds, named.teams.approvals);
  }

  private async wires(target: RepositoryTarget, rules: BranchProtectionEntity[]): Promise<BranchProtectionWire[]> {
    const userIds = [...new Set(rules.flatMap((rule) => [...rule.whitelistUserIds, ...rule.mergeWhitelistUserIds, ...rule.approvalsWhitelistUserIds]))];
    const users = new Map((await this.users.byIds(userIds)).map((user) => [user.id, user.name] as const));
    const teams = target.owner.isOrganization
      ? new Map((await this.protections.teamsReaching(target.owner.id, target.repo.id)).map((team) => [team.id, team.name] as const))
      : new Map<number, string>();
    return rules.map((rule) => toBranchProtectionWire(rule, { users, teams }));
  }
}

/** 422 for a rule name or file pattern that is no valid glob. */
function assertValidPatterns(ruleName: string | null, protectedPatterns: string | null | undefined, unprotectedPatterns: string | null | undefined): void {
  if (ruleName !== null && isGlob(ruleName)) {
    const error = globError(ruleName, '/');
    if (error) throw new InvalidInputError(`invalid rule name ${JSON.stringify(ruleName)}: ${error}`);
  }
  for (const [field, patterns] of [
    ['protected_file_patterns', protectedPatterns],
    ['unprotected_file_patterns', unprotectedPatterns],
  ] as const) {
    const error = patterns ? filePatternsError(patterns) : null;
    if (error) throw new InvalidInputError(`invalid ${field}: ${error}`);
  }
}
