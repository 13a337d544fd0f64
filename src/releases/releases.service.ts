import type { RepositoryTarget } from '../access/repository-policy';
import { seesReleaseDrafts } from '../access/repository-viewer-rules';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { faultPoint } from '../common/fault-points';
import type { EntityManager } from 'typeorm';
import { AuthContext } from '../auth/auth-context';
import { RepositoryEvents } from '../events/repository-events';
import { BlobStorage, fannedKey } from '../blobs/blob-storage';
import { ConflictError, InvalidInputError, NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { Clock } from '../common/time';
import { isUniqueViolation, Transactions } from '../database/transactions';
import { GitTags, isValidTagName } from '../git/git-tags';
import { RepositoryPaths } from '../git/repository-paths';
import { QUOTA_GATE, QuotaGate } from '../quota/quota-gate';
import { RepositoriesService } from '../repos/repositories.service';
import { UserEntity, Visibility } from '../users/user.entity';
import { UserAccounts } from '../users/user-accounts';
import type { CreateReleaseOption, EditReleaseOption } from './release.options';
import { AttachmentEntity, ReleaseEntity } from './release.entities';
import { ReleasePlace, toReleaseWire } from './release.mapper';
import { ReleaseFilter, ReleaseStore } from './release.store';
import type { ReleaseWire } from './release.wire';
import { SiteUrls } from '../common/site-urls';

/** A release the caller may see, with where it lives and whether the caller may change it. */
export interface VisibleRelease extends ReleasePlace {
  release: ReleaseEntity;
  canWrite: boolean;
}

/** A repository route's lookup: the place, and whether the caller writes to it. */
export interface ReleaseRepository extends ReleasePlace {
  canWrite: boolean;
}

/** What a release write route answers (403) to a caller who does not write releases, in Forgejo's words. */
export const RELEASE_WRITE_REFUSED = 'user should have a permission to write to a repo';

/**
 * Releases (Forgejo's API v1): drafts are seen only by writers; publishing a release whose tag does not exist
 * creates the tag at `target_commitish` in git; deleting a release keeps its tag and removes its files.
 */
@Injectable()
export class ReleasesService {
  private readonly logger = new Logger('ReleasesService');

  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly releases: ReleaseStore,
    private readonly repositories: RepositoriesService,
    private readonly users: UserAccounts,
    private readonly tags: GitTags,
    private readonly paths: RepositoryPaths,
    private readonly blobs: BlobStorage,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    @Inject(QUOTA_GATE) private readonly quota: QuotaGate,
    private readonly events: RepositoryEvents,
  ) {}

  /** The repository of a /repos/{owner}/{repo}/releases route, and whether the caller writes releases there. */
  async repository(target: RepositoryTarget): Promise<ReleaseRepository> {
    return { repo: target.repo, owner: target.owner, canWrite: await seesReleaseDrafts(target) };
  }

  /** The repository of a release write route, whose rule admitted writers of releases only (RELEASE_WRITE_REFUSED). */
  async writableRepository(target: RepositoryTarget): Promise<ReleaseRepository> {
    return { repo: target.repo, owner: target.owner, canWrite: true };
  }

  /** A release by id, hidden (404) when it is a draft and the caller does not write to the repository. */
  async visible(target: RepositoryTarget, id: number): Promise<VisibleRelease> {
    const place = await this.repository(target);
    return { ...place, release: this.shown(place, await this.releases.findById(place.repo.id, id)) };
  }

  async visibleByTag(target: RepositoryTarget, tag: string): Promise<VisibleRelease> {
    const place = await this.repository(target);
    return { ...place, release: this.shown(place, await this.releases.findByTag(place.repo.id, tag)) };
  }

  async writable(target: RepositoryTarget, id: number): Promise<VisibleRelease> {
    const place = await this.writableRepository(target);
    const release = await this.releases.findById(place.repo.id, id);
    if (!release) throw new NotFoundError();
    return { ...place, release };
  }

  async list(target: RepositoryTarget, filter: Omit<ReleaseFilter, 'includeDrafts'>, page: PageQuery): Promise<Page<ReleaseWire>> {
    const viewer = target.viewer;
    const place = await this.repository(target);
    // Forgejo: a reader asking for drafts gets none rather than an error.
    if (filter.draft === true && !place.canWrite) return { items: [], total: 0 };
    const releases = await this.releases.list(place.repo.id, { ...filter, includeDrafts: place.canWrite }, page);
    return { items: await this.wires(viewer, place, releases.items), total: releases.total };
  }

  async get(target: RepositoryTarget, id: number): Promise<ReleaseWire> {
    const viewer = target.viewer;
    const found = await this.visible(target, id);
    return this.wire(viewer, found, found.release);
  }

  async getByTag(target: RepositoryTarget, tag: string): Promise<ReleaseWire> {
    const viewer = target.viewer;
    const found = await this.visibleByTag(target, tag);
    return this.wire(viewer, found, found.release);
  }

  async latest(target: RepositoryTarget): Promise<ReleaseWire> {
    const viewer = target.viewer;
    const place = await this.repository(target);
    const release = await this.releases.latest(place.repo.id);
    if (!release) throw new NotFoundError();
    return this.wire(viewer, place, release);
  }

  /**
   * POST /repos/{owner}/{repo}/releases. Order (Forgejo): repository 404, sign-in 401, write 403 (the route),
   * body 422 (the controller's binding), quota `size:repos:all` 413, empty repository 422, existing release 409,
   * then the tag and the row.
   */
  async create(target: RepositoryTarget, option: CreateReleaseOption): Promise<ReleaseWire> {
    const viewer = target.viewer;
    const place = await this.writableRepository(target);
    await this.quota.assertCanWrite(place.owner, 'size:repos:all');
    if (place.repo.isEmpty) throw new InvalidInputError('repo is empty');
    if (!isValidTagName(option.tag_name)) throw new InvalidInputError('[TagName]: GitRefName');
    if (await this.releases.findByTag(place.repo.id, option.tag_name)) throw releaseExists(option.tag_name);
    const commitish = option.target_commitish || place.repo.defaultBranch;
    const draft = option.draft ?? false;
    const sha1 = draft ? '' : await this.ensureTag(place, option.tag_name, commitish);
    let release: ReleaseEntity;
    try {
      release = await this.transactions.run(async (tx) => {
        const row = await this.releases.insert(tx, {
          repoId: place.repo.id,
          publisherId: viewer.user!.id,
          tagName: option.tag_name,
          target: commitish,
          title: option.name ?? '',
          note: option.body ?? '',
          sha1,
          isDraft: draft,
          isPrerelease: option.prerelease ?? false,
          hideArchiveLinks: option.hide_archive_links ?? false,
          createdUnix: this.clock.nowUnix(),
        });
        if (!row.isDraft) await this.recordEvent(tx, 'published', place, row, viewer.user!.id);
        return row;
      });
      faultPoint('release.committed');
      this.events.committed();
    } catch (error) {
      // A concurrent creation won; its tag (if this call made it) is the one it points at, so it stays.
      if (isUniqueViolation(error)) throw releaseExists(option.tag_name);
      throw error;
    }
    return this.wire(viewer, place, release);
  }

  /**
   * PATCH /repos/{owner}/{repo}/releases/{id}: publishing a draft creates its tag when missing. Order (Forgejo):
   * the route's write 403, body 422 (the controller's binding), then the release (404).
   */
  async edit(target: RepositoryTarget, id: number, option: EditReleaseOption): Promise<ReleaseWire> {
    const viewer = target.viewer;
    const found = await this.writable(target, id);
    const { release } = found;
    const changes: Partial<ReleaseEntity> = {};
    if (option.tag_name && option.tag_name !== release.tagName) {
      if (!isValidTagName(option.tag_name)) throw new InvalidInputError('[TagName]: GitRefName');
      const other = await this.releases.findByTag(found.repo.id, option.tag_name);
      if (other) throw releaseExists(option.tag_name);
      changes.tagName = option.tag_name;
    }
    if (option.target_commitish) changes.target = option.target_commitish;
    // Forgejo changes the texts only when given non-empty: "" leaves a title or notes as they are.
    if (option.name) changes.title = option.name;
    if (option.body) changes.note = option.body;
    if (option.draft !== undefined && option.draft !== null) changes.isDraft = option.draft;
    if (option.prerelease !== undefined && option.prerelease !== null) changes.isPrerelease = option.prerelease;
    if (option.hide_archive_links !== undefined && option.hide_archive_links !== null) changes.hideArchiveLinks = option.hide_archive_links;
    const next = { ...release, ...changes };
    if (!next.isDraft && (release.isDraft || changes.tagName)) {
      changes.sha1 = await this.ensureTag(found, next.tagName, next.target);
    }
    try {
      await this.transactions.run(async (tx) => {
        await this.releases.update(tx, release.id, changes);
        // Publishing a draft is `published`; a change of a published release is `updated`; drafts are silent.
        if (!next.isDraft) await this.recordEvent(tx, release.isDraft ? 'published' : 'updated', found, { ...next, ...changes }, viewer.user!.id);
      });
      this.events.committed();
    } catch (error) {
      if (isUniqueViolation(error)) throw releaseExists(next.tagName);
      throw error;
    }
    return this.wire(viewer, found, (await this.releases.findById(found.repo.id, release.id)) ?? next);
  }

  async delete(target: RepositoryTarget, id: number): Promise<void> {
    const found = await this.writable(target, id);
    await this.remove(found, found.release, target.viewer.user!.id);
  }

  /** DELETE /repos/{owner}/{repo}/releases/tags/{tag}: the release goes, the git tag stays. */
  async deleteByTag(target: RepositoryTarget, tag: string): Promise<void> {
    const place = await this.writableRepository(target);
    const release = await this.releases.findByTag(place.repo.id, tag);
    if (!release) throw new NotFoundError();
    await this.remove(place, release, target.viewer.user!.id);
  }

  /** The row and its attachments' rows in one transaction, then their files. */
  private async remove(place: ReleasePlace, release: ReleaseEntity, senderId: number): Promise<void> {
    const uuids = await this.transactions.run(async (tx) => {
      const removed = await this.releases.delete(tx, release.id);
      if (removed !== null && !release.isDraft) await this.recordEvent(tx, 'deleted', place, release, senderId);
      return removed;
    });
    this.events.committed();
    if (uuids === null) throw new NotFoundError();
    await this.removeFiles(uuids);
  }

  /** Files of attachments whose rows are gone; a failure is logged, never undoes the deletion. */
  async removeFiles(uuids: string[]): Promise<void> {
    for (const uuid of uuids) {
      await this.blobs.remove(attachmentKey(uuid)).catch((error: Error) => this.logger.error(`attachment ${uuid} kept its file: ${error.message}`));
    }
  }

  /** The `release` event, in the transaction of the change; the release as an anonymous reader sees it. */
  private async recordEvent(
    tx: EntityManager,
    action: 'published' | 'updated' | 'deleted',
    place: ReleasePlace,
    release: ReleaseEntity,
    senderId: number,
  ): Promise<void> {
    if (!(await this.events.listensTo(place.repo, tx))) return;
    const wire = await this.wire(AuthContext.anonymous(), place, release);
    await this.events.record(tx, { kind: 'release', action, repo: place.repo, senderId, release: wire });
  }

  async wire(viewer: AuthContext, place: ReleasePlace, release: ReleaseEntity): Promise<ReleaseWire> {
    return (await this.wires(viewer, place, [release]))[0];
  }

  private async wires(viewer: AuthContext, place: ReleasePlace, releases: ReleaseEntity[]): Promise<ReleaseWire[]> {
    const [publishers, attachments] = await Promise.all([
      this.users.byIds([...new Set(releases.map((release) => release.publisherId))]),
      this.releases.attachmentsOf(releases.map((release) => release.id)),
    ]);
    const byId = new Map(publishers.map((user) => [user.id, user]));
    const site = this.siteUrls;
    return releases.map((release) =>
      toReleaseWire(
        place,
        release,
        byId.get(release.publisherId) ?? ghost(),
        attachments.filter((a: AttachmentEntity) => a.releaseId === release.id),
        viewer,
        site,
      ),
    );
  }

  private shown(place: ReleaseRepository, release: ReleaseEntity | null): ReleaseEntity {
    if (!release || (release.isDraft && !place.canWrite)) throw new NotFoundError();
    return release;
  }

  /** The commit of the tag; the tag is created at `target` when missing (Forgejo: unknown target → 404). */
  private async ensureTag(place: ReleasePlace, tag: string, target: string): Promise<string> {
    const dir = this.paths.repository(place.owner.name, place.repo.name);
    const existing = await this.tags.commitOf(dir, tag);
    if (existing) return existing;
    const commit = await this.tags.resolveCommit(dir, target);
    if (!commit) throw new NotFoundError(`target "${target}" not found`);
    if (!(await this.tags.create(dir, tag, commit))) {
      // Created meanwhile by a push or a concurrent release: use whatever it points at now.
      const now = await this.tags.commitOf(dir, tag);
      if (now) return now;
    }
    faultPoint('release.tag-created');
    // The new ref is on disk: the size quota counts it, as after a push.
    await this.repositories.refreshGitSize(place.owner.name, place.repo);
    return commit;
  }
}

export function attachmentKey(uuid: string): string {
  return fannedKey('attachments', uuid);
}

function releaseExists(tag: string): ConflictError {
  return new ConflictError(`Release with tag "${tag}" already exists`);
}

/** The author of a release whose publisher was deleted (Forgejo's ghost user). */
function ghost(): UserEntity {
  return Object.assign(new UserEntity(), {
    id: -1,
    name: 'Ghost',
    lowerName: 'ghost',
    fullName: '',
    email: '',
    keepEmailPrivate: true,
    location: '',
    website: '',
    description: '',
    visibility: Visibility.Public,
    numFollowers: 0,
    numFollowing: 0,
    numStars: 0,
    createdUnix: 0,
  });
}
