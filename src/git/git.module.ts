import { RepositoryJournal } from './repository-journal';
import { Module } from '@nestjs/common';
import { GitChanges } from './git-changes';
import { GitCommand } from './git-command';
import { GitData } from './git-data';
import { GitLastCommits } from './git-last-commits';
import { GitLauncher } from './git-launcher';
import { GitLimits } from './git-limits';
import { GitObjectReaders } from './git-object-readers';
import { GitObjects } from './git-objects';
import { GitProcesses } from './git-processes';
import { GitRemotes } from './git-remotes';
import { GitRepositories } from './git-repositories';
import { CommitGraphs } from './commit-graphs';
import { GitPools } from './git-pools';
import { GitTags } from './git-tags';
import { GitPushCommits } from './git-push-commits';
import { GitTreeBudget } from './git-tree-budget';
import { GitCommits } from './git-commits';
import { GitCompare } from './git-compare';
import { GitReads } from './git-reads';
import { GitRefs } from './git-refs';
import { GitTrees } from './git-trees';
import { GitWrites } from './git-writes';
import { GitMerges } from './merge-engine';
import { PushHooks } from './push-hooks';
import { RefPacking } from './ref-packing';
import { RepositoryPaths } from './repository-paths';

/** What other modules may inject. */
const EXPORTED = [
  GitCommand,
  GitChanges,
  GitRemotes,
  GitRepositories,
  CommitGraphs,
  RefPacking,
  GitTags,
  RepositoryPaths,
  PushHooks,
  GitProcesses,
  GitRefs,
  GitCommits,
  GitTrees,
  GitReads,
  GitWrites,
  GitMerges,
  GitObjectReaders,
  GitObjects,
  GitLastCommits,
  GitData,
  GitPushCommits,
  GitTreeBudget,
  RepositoryJournal,
  GitPools,
  GitCompare,
];

/**
 * Git as shared infrastructure: the only code that spawns git (plumbing commands and the serving processes
 * of both transports), the repositories' paths on disk, and the hooks Anvil owns.
 */
@Module({
  providers: [GitLauncher, GitLimits, ...EXPORTED],
  exports: EXPORTED,
})
export class GitModule {}
