import { compileGlob, filePatterns, Glob, isGlob, pathMatches } from './branch-globs';
import type { BranchProtectionEntity } from './branch-protection.entity';

/**
 * Branch protection as pure rules (docs/branch-protection.md): which rule governs a branch, and what it refuses
 * at each door. Every door reaches these through BranchProtections (branch-protection-policy.ts); nothing else
 * reads a rule to decide.
 */

export type ProtectionRule = BranchProtectionEntity;

/** A rule name read once: plain (compared lower-cased) or a compiled glob. */
interface CompiledName {
  plain: boolean;
  lower: string;
  glob: Glob | null;
}

const compiledNames = new Map<string, CompiledName>();

function compiledName(name: string): CompiledName {
  let known = compiledNames.get(name);
  if (known) return known;
  const plain = !isGlob(name);
  let glob: Glob | null = null;
  if (!plain) {
    try {
      glob = compileGlob(name, '/');
    } catch {
      // A name stored before globs were checked matches only itself.
      glob = null;
    }
  }
  known = { plain, lower: name.toLowerCase(), glob };
  if (compiledNames.size >= 4096) compiledNames.clear();
  compiledNames.set(name, known);
  return known;
}

/** Plain names before globs, then older rules first: the first match governs a branch. */
export function orderRules<T extends Pick<ProtectionRule, 'ruleName' | 'createdUnix' | 'id'>>(rules: T[]): T[] {
  return rules
    .map((rule) => ({ rule, plain: compiledName(rule.ruleName).plain }))
    .sort((a, b) => (a.plain !== b.plain ? (a.plain ? -1 : 1) : a.rule.createdUnix - b.rule.createdUnix || a.rule.id - b.rule.id))
    .map((entry) => entry.rule);
}

function matches(name: CompiledName, ruleName: string, branch: string, lowerBranch: string): boolean {
  if (name.plain) return name.lower === lowerBranch;
  return name.glob ? name.glob.test(branch) : ruleName === branch;
}

/** A plain name matches without regard to case; a glob (separator `/`) matches the whole branch name. */
export function ruleMatches(ruleName: string, branch: string): boolean {
  return matches(compiledName(ruleName), ruleName, branch, branch.toLowerCase());
}

/** The rule that governs `branch` among rules already in order (orderRules), or null. */
export function governingRule<T extends Pick<ProtectionRule, 'ruleName'>>(ordered: T[], branch: string): T | null {
  const lowerBranch = branch.toLowerCase();
  for (const rule of ordered) if (matches(compiledName(rule.ruleName), rule.ruleName, branch, lowerBranch)) return rule;
  return null;
}

/** Who changes a branch: a user (with what the rule needs to know of them), or a deploy key. */
export type Pusher =
  | {
      kind: 'user';
      userId: number;
      /** The lower-cased name, for the contents API's refusal. */
      lowerName: string;
      /** Whether the user may write code in the repository (asked only when the rule has no whitelist). */
      canWriteCode: () => Promise<boolean>;
      /** Which of `teamIds` the user is a member of (asked only when a whitelist names teams). */
      memberOf: (teamIds: number[]) => Promise<boolean>;
    }
  | { kind: 'deploy-key' };

/** Whether `pusher` may push to a branch under `rule` (files aside): nobody when pushing is off, the owner included. */
export async function mayPush(rule: ProtectionRule, pusher: Pusher): Promise<boolean> {
  if (!rule.canPush) return false;
  if (pusher.kind === 'deploy-key') return !rule.enableWhitelist || rule.whitelistDeployKeys;
  if (!rule.enableWhitelist) return pusher.canWriteCode();
  if (rule.whitelistUserIds.includes(pusher.userId)) return true;
  return rule.whitelistTeamIds.length > 0 && pusher.memberOf(rule.whitelistTeamIds);
}

/** Whether `userId` may merge into a branch under `rule`, given whether they may write code. */
export async function mayMerge(
  rule: ProtectionRule,
  userId: number,
  canWriteCode: boolean,
  memberOf: (teamIds: number[]) => Promise<boolean>,
): Promise<boolean> {
  if (!rule.enableMergeWhitelist) return canWriteCode;
  if (rule.mergeWhitelistUserIds.includes(userId)) return true;
  return rule.mergeWhitelistTeamIds.length > 0 && memberOf(rule.mergeWhitelistTeamIds);
}

/**
 * What git says of one branch update, read only as far as a rule needs: whether it is a deletion, whether it
 * drops commits (old not an ancestor of new), and the changed paths between old (or the empty tree) and new.
 */
export interface BranchUpdateFacts {
  deletion: boolean;
  /** False for a creation. */
  isForcePush(): Promise<boolean>;
  /** The first changed path for which `test` holds, or null; git stops as soon as one is found. */
  firstChangedPath(test: (path: string) => boolean): Promise<string | null>;
}

/** Where a change comes from: each door words Forgejo's refusals its own way. */
export type ProtectionDoor =
  /** A push over HTTP or SSH, or a ref the server moves as a push would (branch creation through the API). */
  | 'git'
  /** DELETE /branches/{branch}. */
  | 'branch-api'
  /** The contents API's writes to an existing branch. */
  | 'contents';

export interface BranchChange {
  door: ProtectionDoor;
  branch: string;
  pusher: Pusher;
  facts: BranchUpdateFacts;
  /** The contents API: the paths written (its check goes by them, not by git's diff). */
  paths?: string[];
  /**
   * The server publishing a pull request's merge: past deletion and force push, the merge rules (canMerge, which
   * the merge route asked) stand in for protected files and the permission to push.
   */
  pullRequestMerge?: boolean;
}

/**
 * The one decision: null when `rule` (the rule governing the branch, or null) lets the change through, else the
 * refusal's text. Nobody is exempt, the repository's owner and site administrators included.
 *
 * A push (door `git`) is judged in this order: deletion, force push, protected files, then the permission to push
 * (`enable_push` and its whitelists, read now), unless every changed file matches an unprotected pattern.
 */
export async function judgeBranchChange(rule: ProtectionRule | null, change: BranchChange): Promise<string | null> {
  if (!rule) return null;
  const { branch, facts } = change;
  if (change.door === 'branch-api') return 'branch protected';
  if (change.door === 'contents') return judgeFileWrite(rule, change);
  if (facts.deletion) return `branch ${branch} is protected from deletion`;
  const protectedPatterns = change.pullRequestMerge ? [] : filePatterns(rule.protectedFilePatterns);
  // Both git reads start at once (the answer still follows the order above); a force push wastes the second.
  const forcePush = facts.isForcePush();
  const changedProtected = protectedPatterns.length > 0 ? facts.firstChangedPath((path) => pathMatches(protectedPatterns, path)) : Promise.resolve(null);
  changedProtected.catch(() => undefined);
  if (await forcePush) return `branch ${branch} is protected from force push`;
  if (change.pullRequestMerge) return null;
  const protectedPath = await changedProtected;
  if (protectedPath === null && (await mayPush(rule, change.pusher))) return null;
  if (protectedPath !== null) return `branch ${branch} is protected from changing file ${protectedPath.trim().toLowerCase()}`;
  const unprotectedPatterns = filePatterns(rule.unprotectedFilePatterns);
  if (unprotectedPatterns.length > 0 && (await facts.firstChangedPath((path) => !pathMatches(unprotectedPatterns, path))) === null) return null;
  return `Not allowed to push to protected branch ${branch}`;
}

/** The contents API's order: per written path, the permission to push (unless the path is unprotected), then protected files. */
async function judgeFileWrite(rule: ProtectionRule, change: BranchChange): Promise<string | null> {
  const unprotectedPatterns = filePatterns(rule.unprotectedFilePatterns);
  const protectedPatterns = filePatterns(rule.protectedFilePatterns);
  let canPush: boolean | undefined;
  for (const path of change.paths ?? []) {
    const unprotected = unprotectedPatterns.length > 0 && pathMatches(unprotectedPatterns, path);
    if (!unprotected) {
      canPush ??= await mayPush(rule, change.pusher);
      if (!canPush) return `user cannot commit to repo [user: ${change.pusher.kind === 'user' ? change.pusher.lowerName : ''}]`;
    }
    if (pathMatches(protectedPatterns, path)) return `path is protected and can not be changed [path: ${path}]`;
  }
  return null;
}
