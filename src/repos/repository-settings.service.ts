import { Injectable } from '@nestjs/common';
import type { RepositoryTarget } from '../access/repository-policy';
import { permissionsOnWire } from '../access/repository-viewer-rules';
import { InvalidInputError } from '../common/errors';
import { Clock } from '../common/time';
import { LifecycleEvents, MirrorIntervalChange } from '../events/lifecycle-events';
import { GitRepositories } from '../git/git-repositories';
import { RepositoryPaths } from '../git/repository-paths';
import type { EditRepositoryOption } from './edit-repository.option';
import { duplicateName, RepositoriesService } from './repositories.service';
import { RepositoryEntity } from './repository.entity';
import { assertUsableRepositoryName } from './repository-names';
import { RepositoryStore } from './repository.store';
import { RepositoryViews } from './repository-views';
import { trackerChanges } from './external-tracker';
import { SiteUrls } from '../common/site-urls';
import type { RepositoryWire } from './repository.wire';

const MERGE_STYLES = ['merge', 'rebase', 'rebase-merge', 'squash', 'fast-forward-only', 'manually-merged'];

/**
 * The pull requests unit and its settings, as Forgejo's PATCH changes them: the settings only when the unit is
 * (or stays) on; an unknown `default_merge_style` is 422.
 */
function pullRequestChanges(repo: RepositoryEntity, option: EditRepositoryOption): Partial<RepositoryEntity> {
  const changes: Partial<RepositoryEntity> = {};
  if (option.has_pull_requests !== undefined && option.has_pull_requests !== null) changes.hasPullRequests = option.has_pull_requests;
  if (!(changes.hasPullRequests ?? repo.hasPullRequests)) return changes;
  const flags: [keyof EditRepositoryOption, keyof RepositoryEntity][] = [
    ['ignore_whitespace_conflicts', 'ignoreWhitespaceConflicts'],
    ['allow_merge_commits', 'allowMergeCommits'],
    ['allow_rebase', 'allowRebase'],
    ['allow_rebase_explicit', 'allowRebaseExplicit'],
    ['allow_squash_merge', 'allowSquashMerge'],
    ['allow_fast_forward_only_merge', 'allowFastForwardOnlyMerge'],
    ['allow_manual_merge', 'allowManualMerge'],
    ['autodetect_manual_merge', 'autodetectManualMerge'],
    ['allow_rebase_update', 'allowRebaseUpdate'],
    ['default_delete_branch_after_merge', 'defaultDeleteBranchAfterMerge'],
    ['default_allow_maintainer_edit', 'defaultAllowMaintainerEdit'],
  ];
  for (const [field, column] of flags) {
    const value = option[field];
    if (typeof value === 'boolean') (changes as Record<string, unknown>)[column] = value;
  }
  if (option.default_merge_style !== undefined && option.default_merge_style !== null && option.default_merge_style !== '') {
    if (!MERGE_STYLES.includes(option.default_merge_style)) throw new InvalidInputError(`[DefaultMergeStyle]: must be one of ${MERGE_STYLES.join(', ')}`);
    changes.defaultMergeStyle = option.default_merge_style;
  }
  return changes;
}

/**
 * A repository's settings (PATCH /repos/{owner}/{repo}): description, website, visibility, template and archive
 * flags, the issue tracker, default branch, mirror interval and name. A rename's move of the directory is the lifecycle's
 * (RepositoriesService.updateRow), with its compensation.
 */
@Injectable()
export class RepositorySettings {
  constructor(
    private readonly lifecycle: RepositoriesService,
    private readonly repositories: RepositoryStore,
    private readonly views: RepositoryViews,
    private readonly git: GitRepositories,
    private readonly paths: RepositoryPaths,
    private readonly clock: Clock,
    private readonly siteUrls: SiteUrls,
    private readonly bus: LifecycleEvents,
  ) {}

  /**
   * PATCH /repos/{owner}/{repo}, whose route admits repository admins before the body is read (check-order.md).
   * A new `name` is checked as at creation (duplicate 409, reserved 422); the directory moves before the row
   * changes and moves back when the row cannot change, so row and directory stay together. Stars and watches
   * hang on the repository id and are kept.
   */
  async edit(target: RepositoryTarget, option: EditRepositoryOption): Promise<RepositoryWire> {
    const { repo, owner, viewer } = target;
    const changes: Partial<RepositoryEntity> = {};
    if (option.description !== undefined && option.description !== null) changes.description = option.description;
    if (option.website !== undefined && option.website !== null) changes.website = option.website;
    if (option.private !== undefined && option.private !== null) {
      // A fork's visibility follows its source's while it has one, as Forgejo forces it: a fork of a private
      // source cannot be published.
      const source = repo.isFork && repo.forkId ? await this.repositories.findById(repo.forkId) : null;
      changes.isPrivate = source ? source.isPrivate : option.private;
    }
    if (option.template !== undefined && option.template !== null) changes.isTemplate = option.template;
    if (option.archived !== undefined && option.archived !== null) {
      if (repo.isMirror) throw new InvalidInputError('repo is a mirror, cannot archive/un-archive');
      if (option.archived !== repo.isArchived) {
        changes.isArchived = option.archived;
        changes.archivedUnix = option.archived ? this.clock.nowUnix() : 0;
      }
    }
    Object.assign(changes, trackerChanges(repo, option, this.siteUrls.rootUrl));
    Object.assign(changes, pullRequestChanges(repo, option));
    const newName = option.name && option.name !== repo.name ? option.name : undefined;
    // Only a change beyond letter case moves the directory (paths on disk are lowercased).
    const moves = newName !== undefined && newName.toLowerCase() !== repo.lowerName;
    if (newName !== undefined) {
      if (moves) {
        if (await this.repositories.findByOwnerAndName(owner.id, newName)) throw duplicateName();
        assertUsableRepositoryName(newName);
      }
      changes.name = newName;
      changes.lowerName = newName.toLowerCase();
    }
    let mirrorChange: MirrorIntervalChange | null = null;
    if (option.mirror_interval !== undefined && option.mirror_interval !== null) {
      // Forgejo's updateMirror: only a mirror has an interval (the mirrors module checks and writes it).
      if (!repo.isMirror || !this.bus.heard('mirror.interval-edited')) throw new InvalidInputError('repo is not a mirror, can not change mirror interval');
      [mirrorChange] = await this.bus.emit('mirror.interval-edited', { repo, value: option.mirror_interval });
      changes.mirrorInterval = mirrorChange.display;
    }
    const dir = this.paths.repository(owner.name, repo.name);
    const branch = option.default_branch;
    // As Forgejo: the default branch changes only to a branch that exists, or freely while the repository is empty.
    if (branch && branch !== repo.defaultBranch && (repo.isEmpty || (await this.git.branchExists(dir, branch)))) {
      await this.git.setHead(dir, branch);
      changes.defaultBranch = branch;
    }
    const undoHead = () => (changes.defaultBranch ? this.git.setHead(dir, repo.defaultBranch).catch(() => undefined) : undefined);
    await this.lifecycle.updateRow(target, changes, {
      moveTo: moves ? newName : undefined,
      apply: async (tx) => {
        await mirrorChange?.apply(tx);
      },
      undo: undoHead,
    });
    const stored = (await this.repositories.findById(repo.id))!;
    return this.views.one(stored, owner, viewer, await permissionsOnWire(target));
  }
}
