import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { GitConfig } from '../config/slices';
import { useCgroups } from './git-budget';
import { detectCgroup, realCgroupSources } from './git-cgroups';

/**
 * Chooses at start how each git's memory and CPU budget is enforced (a cgroup v2 of its own where one is
 * delegated, rlimits otherwise) and logs which is in force, with the reason when it is not cgroups.
 */
@Injectable()
export class GitLimits implements OnModuleInit {
  private readonly logger = new Logger('GitLimits');
  /** What the log line said: the way budgets are enforced. */
  inForce = '';

  constructor(private readonly gitConfig: GitConfig) {}

  onModuleInit(): void {
    const setting = this.gitConfig?.cgroup ?? 'auto';
    this.inForce = useCgroups(detectCgroup(setting, realCgroupSources()));
    this.logger.log(`git process budgets: ${this.inForce}`);
  }
}
