import { Column, Entity, Index, ValueTransformer } from 'typeorm';
import { CounterColumn, FlagColumn, IdColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/** A JSON list in a text column (ids of users or teams, status contexts); an empty or unreadable one is []. */
const jsonList: ValueTransformer = {
  to: (value: unknown) => JSON.stringify(Array.isArray(value) ? value : []),
  from: (value: unknown) => {
    if (typeof value !== 'string' || value === '') return [];
    try {
      const parsed: unknown = JSON.parse(value);
      return Array.isArray(parsed) ? parsed : [];
    } catch {
      return [];
    }
  },
};

function ListColumn(): PropertyDecorator {
  return Column({ type: 'text', transformer: jsonList });
}

/**
 * A branch protection rule of one repository (docs/branch-protection.md). `ruleName` is a branch name or a glob;
 * the whitelists hold user and team ids, shown by name and checked against the repository when they are read.
 */
@Entity('protected_branch')
@Index('IDX_protected_branch_repo_id_rule_name', ['repoId', 'ruleName'], { unique: true })
export class BranchProtectionEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  repoId: number;

  @TextColumn(255)
  ruleName: string;

  /** `enable_push`: pushing is allowed at all (to writers, or to the whitelist when it is enabled). */
  @FlagColumn(false)
  canPush: boolean;

  @FlagColumn(false)
  enableWhitelist: boolean;

  @ListColumn()
  whitelistUserIds: number[];

  @ListColumn()
  whitelistTeamIds: number[];

  @FlagColumn(false)
  whitelistDeployKeys: boolean;

  @FlagColumn(false)
  enableMergeWhitelist: boolean;

  @ListColumn()
  mergeWhitelistUserIds: number[];

  @ListColumn()
  mergeWhitelistTeamIds: number[];

  @FlagColumn(false)
  enableStatusCheck: boolean;

  @ListColumn()
  statusCheckContexts: string[];

  @FlagColumn(false)
  enableApprovalsWhitelist: boolean;

  @ListColumn()
  approvalsWhitelistUserIds: number[];

  @ListColumn()
  approvalsWhitelistTeamIds: number[];

  @CounterColumn()
  requiredApprovals: number;

  @FlagColumn(false)
  blockOnRejectedReviews: boolean;

  @FlagColumn(false)
  blockOnOfficialReviewRequests: boolean;

  @FlagColumn(false)
  blockOnOutdatedBranch: boolean;

  @FlagColumn(false)
  dismissStaleApprovals: boolean;

  @FlagColumn(false)
  ignoreStaleApprovals: boolean;

  @FlagColumn(false)
  requireSignedCommits: boolean;

  @Column({ type: 'text' })
  protectedFilePatterns: string;

  @Column({ type: 'text' })
  unprotectedFilePatterns: string;

  @FlagColumn(false)
  applyToAdmins: boolean;

  @UnixTimeColumn()
  createdUnix: number;

  @UnixTimeColumn()
  updatedUnix: number;
}
