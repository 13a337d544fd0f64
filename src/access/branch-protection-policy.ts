import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ForbiddenError } from '../common/errors';
import type { RepositoryEntity } from '../repos/repository.entity';
import type { UserEntity } from '../users/user.entity';
import { NO_GRANTS, resolvePermission } from './access-policy';
import { AccessMode } from './access-mode';
import { AccessStore, teamGrant } from './access.store';
import type { BranchProtectionEntity } from './branch-protection.entity';
import { filePatterns, pathMatches } from './branch-globs';
import { canMerge, CommitState, dismissesStaleApprovals, isOfficialReviewer, MergeReview, MergeVerdict } from './branch-merge';
import { BranchChange, BranchUpdateFacts, governingRule, judgeBranchChange, mayMerge, mayPush, orderRules, ProtectionRule, Pusher } from './branch-protection';
import { BranchProtectionStore, NamedTeam } from './branch-protection.store';
import type { RepositoryTarget } from './repository-policy';

/** Who a rule is asked about: a user row (the caller, a pusher, a whitelisted name). */
type PolicyUser = Pick<UserEntity, 'id' | 'lowerName' | 'isAdmin' | 'isRestricted'>;

/** What the Branch JSON says of protection, for one caller. */
export interface BranchProtectionView {
  protected: boolean;
  required_approvals: number;
  enable_status_check: boolean;
  status_check_contexts: string[];
  user_can_push: boolean;
  user_can_merge: boolean;
  effective_branch_protection_name: string;
}

/**
 * Branch protection in the access policy: the rules of a repository (one indexed read, never cached, so a change
 * holds for the next push on every instance), and the one decision every door asks (judgeBranchChange): pushes
 * over HTTP and SSH, deploy keys, the contents API, branch deletion and creation through the API. Merges ask
 * canMerge (branch-merge.ts) with the rule `governing` returns.
 */
@Injectable()
export class BranchProtections {
  constructor(
    private readonly store: BranchProtectionStore,
    private readonly access: AccessStore,
  ) {}

  /** The repository's rules in the order they are matched: plain names first, then older rules. */
  async rulesOf(repoId: number): Promise<ProtectionRule[]> {
    return orderRules(await this.store.listOfRepository(repoId));
  }

  /** The rule governing `branch`, or null. */
  async governing(repoId: number, branch: string): Promise<ProtectionRule | null> {
    return governingRule(await this.rulesOf(repoId), branch);
  }

  /**
   * The one decision: null when the change may go through, else Forgejo's text for the door. `rules`: the
   * repository's rules when the caller read them already (a push of several branches reads them once).
   */
  async judge(repoId: number, change: BranchChange, rules?: ProtectionRule[]): Promise<string | null> {
    const ordered = rules ?? (await this.rulesOf(repoId));
    return judgeBranchChange(governingRule(ordered, change.branch), change);
  }

  /** judge, refusing with 403 and the door's text. */
  async assertAllowed(repoId: number, change: BranchChange): Promise<void> {
    const refusal = await this.judge(repoId, change);
    if (refusal !== null) throw new ForbiddenError(refusal);
  }

  /** A user as a pusher: their write access and team memberships are read only if a rule asks. */
  userPusher(user: PolicyUser, repo: RepositoryEntity, owner: UserEntity): Pusher {
    return {
      kind: 'user',
      userId: user.id,
      lowerName: user.lowerName,
      canWriteCode: () => this.canWriteCode(user, repo, owner),
      memberOf: (teamIds) => this.store.memberOfAny(user.id, teamIds),
    };
  }

  /**
   * The user behind a push as a pusher, read (with the repository's owner) only if a rule asks whether they may
   * write code: a push to unprotected branches costs no read of them.
   */
  pusherById(userId: number, repo: RepositoryEntity, load: () => Promise<{ user: PolicyUser | null; owner: UserEntity | null }>): Pusher {
    return {
      kind: 'user',
      userId,
      lowerName: '',
      canWriteCode: async () => {
        const { user, owner } = await load();
        return user !== null && owner !== null && this.canWriteCode(user, repo, owner);
      },
      memberOf: (teamIds) => this.store.memberOfAny(userId, teamIds),
    };
  }

  /** The caller of a repository route as a pusher (anonymous callers never get this far: writes need sign-in). */
  callerPusher(target: RepositoryTarget): Pusher {
    const user = target.viewer.user;
    if (!user) return { kind: 'user', userId: 0, lowerName: '', canWriteCode: async () => false, memberOf: async () => false };
    return {
      kind: 'user',
      userId: user.id,
      lowerName: user.lowerName,
      canWriteCode: () => target.canWrite('repo.code'),
      memberOf: (teamIds) => this.store.memberOfAny(user.id, teamIds),
    };
  }

  readonly deployKeyPusher: Pusher = { kind: 'deploy-key' };

  /** Whether `user` may write code in the repository, by the access policy. */
  async canWriteCode(user: PolicyUser, repo: RepositoryEntity, owner: UserEntity): Promise<boolean> {
    return (await this.permissionOf(user, repo, owner)).canWrite('repo.code');
  }

  /** Whether `user` may read code in the repository (who may stay on an approvals whitelist). */
  async canReadCode(user: PolicyUser, repo: RepositoryEntity, owner: UserEntity): Promise<boolean> {
    return (await this.permissionOf(user, repo, owner)).canRead('repo.code');
  }

  private async permissionOf(user: PolicyUser, repo: RepositoryEntity, owner: UserEntity) {
    const subject = { userId: user.id, isAdmin: user.isAdmin, restricted: user.isRestricted };
    const grants = user.isAdmin || user.id === repo.ownerId ? NO_GRANTS : await this.access.grants(user.id, repo);
    return resolvePermission(subject, repo, owner, grants);
  }

  /**
   * The protection fields of the Branch JSON for the route's caller: the rule's requirements, whether the caller
   * may push and merge, and the governing rule's name for repository administrators only.
   */
  async branchViews(target: RepositoryTarget, branches: string[]): Promise<Map<string, BranchProtectionView>> {
    const rules = await this.rulesOf(target.repo.id);
    const signedIn = target.viewer.user !== null;
    const permission = signedIn ? await target.permission() : null;
    const canWrite = permission?.canWrite('repo.code') ?? false;
    const pusher = this.callerPusher(target);
    const views = new Map<string, BranchProtectionView>();
    for (const branch of branches) {
      const rule = governingRule(rules, branch);
      if (!rule) {
        views.set(branch, {
          protected: false,
          required_approvals: 0,
          enable_status_check: false,
          status_check_contexts: [],
          user_can_push: canWrite,
          user_can_merge: canWrite,
          effective_branch_protection_name: '',
        });
        continue;
      }
      views.set(branch, {
        protected: true,
        required_approvals: rule.requiredApprovals,
        enable_status_check: rule.enableStatusCheck,
        status_check_contexts: rule.statusCheckContexts,
        user_can_push: signedIn && (await mayPush(rule, pusher)),
        user_can_merge:
          signedIn && (await mayMerge(rule, target.viewer.user!.id, canWrite, (teamIds) => this.store.memberOfAny(target.viewer.user!.id, teamIds))),
        effective_branch_protection_name: permission?.isAdmin ? rule.ruleName : '',
      });
    }
    return views;
  }

  /**
   * Whether the route's caller may merge into `baseBranch` at all: the merge whitelist of the governing rule, or
   * write access to the code without one (the first of a merge's checks).
   */
  async mayMergeInto(target: RepositoryTarget, baseBranch: string): Promise<boolean> {
    const user = target.viewer.user;
    if (!user) return false;
    const canWrite = await target.canWrite('repo.code');
    const rule = await this.governing(target.repo.id, baseBranch);
    if (!rule) return canWrite;
    return mayMerge(rule, user.id, canWrite, (teamIds) => this.store.memberOfAny(user.id, teamIds));
  }

  /**
   * The merge rules of the branch a pull request goes into (canMerge), with the facts read here: the caller's
   * standing, the files the pull request changes (`changes`: merge base to head; read only under protected file
   * patterns), the latest statuses of the head commit (read only under `enable_status_check`).
   */
  async judgeMerge(
    target: RepositoryTarget,
    merge: {
      baseBranch: string;
      forceMerge: boolean;
      commitsBehind: number;
      reviews: MergeReview[];
      changes: Pick<BranchUpdateFacts, 'firstChangedPath'>;
      statuses: () => Promise<{ context: string; state: string }[]>;
    },
  ): Promise<MergeVerdict> {
    const user = target.viewer.user;
    const rule = await this.governing(target.repo.id, merge.baseBranch);
    const permission = user ? await target.permission() : null;
    const patterns = rule ? filePatterns(rule.protectedFilePatterns) : [];
    const changedProtected = patterns.length > 0 ? await merge.changes.firstChangedPath((path) => pathMatches(patterns, path)) : null;
    const statuses = rule?.enableStatusCheck ? await merge.statuses() : [];
    return canMerge(rule, {
      doerId: user?.id ?? 0,
      canWriteCode: permission?.canWrite('repo.code') ?? false,
      isSiteAdmin: target.viewer.isAdmin,
      isRepoAdmin: permission?.isAdmin ?? false,
      teamIds: rule && user && target.owner.isOrganization ? await this.store.teamIdsOf(user.id, target.owner.id) : [],
      reviews: merge.reviews,
      statuses: statuses.map((status) => ({ context: status.context, state: status.state as CommitState })),
      commitsBehind: merge.commitsBehind,
      changedProtectedFiles: changedProtected === null ? [] : [changedProtected],
      forceMerge: merge.forceMerge,
    });
  }

  /**
   * Whether a review by `user` of a pull request into `baseBranch` counts as official: on the approvals whitelist
   * of the governing rule when it enables one, else whether the user may write code (with or without a rule).
   */
  async isOfficialReviewer(repo: RepositoryEntity, owner: UserEntity, user: PolicyUser, baseBranch: string): Promise<boolean> {
    const rule = await this.governing(repo.id, baseBranch);
    const canWrite = rule?.enableApprovalsWhitelist ? false : await this.canWriteCode(user, repo, owner);
    if (!rule) return canWrite;
    const teamIds =
      rule.enableApprovalsWhitelist && rule.approvalsWhitelistTeamIds.length > 0 && owner.isOrganization ? await this.store.teamIdsOf(user.id, owner.id) : [];
    return isOfficialReviewer(rule, user.id, canWrite, teamIds);
  }

  /**
   * Whether a review asked of a team is official: under a rule of the base branch, the team is on its approvals
   * whitelist when that is enabled, else it writes code; without a rule, never (as Forgejo's IsOfficialReviewerTeam).
   */
  async isOfficialReviewerTeam(repoId: number, baseBranch: string, team: { id: number; authorize: number; units: string }): Promise<boolean> {
    const rule = await this.governing(repoId, baseBranch);
    if (!rule) return false;
    if (rule.enableApprovalsWhitelist) return rule.approvalsWhitelistTeamIds.includes(team.id);
    return (teamGrant(team.authorize, team.units).units['repo.code'] ?? AccessMode.None) >= AccessMode.Write;
  }

  /** Whether a push that changed a pull request's diff dismisses its approvals (the base branch's rule says so). */
  async dismissesStaleApprovals(repoId: number, baseBranch: string): Promise<boolean> {
    return dismissesStaleApprovals(await this.governing(repoId, baseBranch));
  }

  // The rules' own records, for the branch protection routes (src/branch-protections/).

  listRules(repoId: number): Promise<BranchProtectionEntity[]> {
    return this.store.listOfRepository(repoId);
  }

  ruleByName(repoId: number, ruleName: string, tx?: EntityManager): Promise<BranchProtectionEntity | null> {
    return this.store.byName(repoId, ruleName, tx);
  }

  insertRule(tx: EntityManager, rule: Partial<BranchProtectionEntity>): Promise<BranchProtectionEntity> {
    return this.store.insert(tx, rule);
  }

  updateRule(tx: EntityManager, rule: BranchProtectionEntity): Promise<void> {
    return this.store.update(tx, rule);
  }

  deleteRule(tx: EntityManager, id: number): Promise<void> {
    return this.store.delete(tx, id);
  }

  deleteRulesOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    return this.store.deleteAllOfRepository(tx, repoId);
  }

  teamByName(orgId: number, name: string): Promise<NamedTeam | null> {
    return this.store.teamByName(orgId, name);
  }

  teamsReaching(orgId: number, repoId: number): Promise<NamedTeam[]> {
    return this.store.teamsReaching(orgId, repoId);
  }

  teamIdsOf(uid: number, orgId: number): Promise<number[]> {
    return this.store.teamIdsOf(uid, orgId);
  }
}
