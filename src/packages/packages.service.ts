import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuthContext } from '../auth/auth-context';
import { RepositoryEvents } from '../events/repository-events';
import { BlobStorage, fannedKey, StagedBlob } from '../blobs/blob-storage';
import type { BlobDownload } from '../blobs/blob-download';
import type { IncomingUpload } from '../http/upload-body';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError, UnauthorizedError } from '../common/errors';
import { faultPoint } from '../common/fault-points';
import { Page, PageQuery } from '../common/paging';
import { Clock } from '../common/time';
import { UploadConfig } from '../config/slices';
import { isUniqueViolation, Transactions } from '../database/transactions';
import { QUOTA_GATE, QuotaGate, QuotaReservation } from '../quota/quota-gate';
import { QuotaUsageSources } from '../quota/quota-usage-sources';
import type { QuotaUsedPackageWire } from '../quota/quota.wire';
import { OrganizationPolicy } from '../access/organization-policy';
import { UserVisibility } from '../users/user-visibility';
import { UserEntity } from '../users/user.entity';
import { UserAccounts } from '../users/user-accounts';
import { isValidFileName, isValidPackageName, isValidPackageVersion } from './package-names';
import { packageVersionHtmlUrl, toPackageFileWire, toPackageWire } from './package.mapper';
import { PackageStore, VersionOfPackage, VersionSearch } from './package.store';
import type { PackageFileWire, PackageWire } from './package.wire';
import { SiteUrls } from '../common/site-urls';

export const GENERIC = 'generic';
/** The types Forgejo knows; Anvil stores only generic packages, the others simply list nothing. */
export const PACKAGE_TYPES = [
  'alpine',
  'cargo',
  'chef',
  'composer',
  'conan',
  'conda',
  'container',
  'cran',
  'debian',
  'generic',
  'go',
  'helm',
  'maven',
  'npm',
  'nuget',
  'pub',
  'pypi',
  'rpm',
  'rubygems',
  'swift',
  'vagrant',
];

/** Coordinates of a generic package file, as they come from the path. */
export interface GenericFileRef {
  owner: string;
  name: string;
  version: string;
  filename: string;
}

/**
 * Generic packages (Forgejo's generic registry) and the package API views. Reading follows the owner's
 * visibility; publishing and deleting need the owner itself, an owner of the owning organisation, or a site
 * admin. Files are stored once per SHA-256 and counted in the owner's `size:assets:packages:all`.
 */
@Injectable()
export class PackagesService implements OnModuleInit {
  private readonly logger = new Logger('PackagesService');

  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly store: PackageStore,
    private readonly users: UserAccounts,
    private readonly visibility: UserVisibility,
    private readonly organizationPolicy: OrganizationPolicy,
    private readonly blobs: BlobStorage,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly usageSources: QuotaUsageSources,
    private readonly uploadConfig: UploadConfig,
    @Inject(QUOTA_GATE) private readonly quota: QuotaGate,
    private readonly events: RepositoryEvents,
  ) {}

  onModuleInit(): void {
    this.usageSources.register('packages', {
      bytesOf: (ownerId) => this.store.bytesOfOwner(ownerId),
      list: (ownerId, page) => this.quotaList(ownerId, page),
    });
  }

  /**
   * The owner of a package route, readable by the caller: an anonymous caller who cannot see it is asked to
   * sign in (401, so that `curl --user` and package clients retry with credentials), unknown or not visible
   * otherwise is 404, and a public-only token on a non-public owner 403.
   */
  async readableOwner(viewer: AuthContext, ownerName: string): Promise<UserEntity> {
    const owner = await this.users.byName(ownerName);
    if (!owner || !(await this.visibility.canSee(viewer, owner))) {
      if (!viewer.isSignedIn) throw new UnauthorizedError('reqPackageAccess');
      throw new NotFoundError();
    }
    this.visibility.assertTokenMaySee(viewer, owner);
    return owner;
  }

  /** As readableOwner, then sign-in (401) and the right to publish for the owner (403). */
  async writableOwner(viewer: AuthContext, ownerName: string): Promise<UserEntity> {
    const owner = await this.readableOwner(viewer, ownerName);
    if (!viewer.user) throw new UnauthorizedError('reqPackageAccess');
    const allowed =
      viewer.isAdmin || viewer.user.id === owner.id || (owner.isOrganization && (await this.organizationPolicy.mayWritePackages(viewer, owner.id)));
    if (!allowed) throw new ForbiddenError('reqPackageAccess');
    return owner;
  }

  /**
   * PUT /api/packages/{owner}/generic/{name}/{version}/{filename}: access, names (400), declared size and
   * quota (413) and an existing file (409) are all decided before the body is read.
   */
  async upload(viewer: AuthContext, ref: GenericFileRef, upload: IncomingUpload): Promise<void> {
    const owner = await this.writableOwner(viewer, ref.owner);
    assertGenericRef(ref);
    const maxBytes = this.uploadConfig.packageMaxBytes;
    upload.assertDeclaredLength(maxBytes);
    // The most this body can add is reserved before a byte of it is read, and settled with the file's row.
    const reservation = await this.quota.reserve(owner, 'size:assets:packages:all', 'packages', upload.declaredLength ?? maxBytes);
    try {
      const existing = await this.store.findVersion(owner.id, GENERIC, ref.name, ref.version);
      if (existing && (await this.store.findFile(existing.version.id, ref.filename))) throw fileExists();
      const staged = await this.blobs.receive(upload.raw().stream, maxBytes, ['md5', 'sha1', 'sha256', 'sha512']);
      await this.keep(staged, owner, viewer.user!, ref, reservation);
    } finally {
      await reservation.release();
    }
  }

  /**
   * The complete content is parked; package, version, blob and file rows are written in one transaction; after
   * its commit the content is renamed under its key (over identical content when the blob was already stored).
   * A crash after the commit leaves the parked file for the start-up reconciliation to move.
   */
  private async keep(staged: StagedBlob, owner: UserEntity, creator: UserEntity, ref: GenericFileRef, reservation: QuotaReservation): Promise<void> {
    const now = this.clock.nowUnix();
    try {
      await staged.park(packageBlobKey(staged.digests.sha256!));
      faultPoint('package.parked');
      // A concurrent upload may create the same package or version first: its unique key then fails this
      // transaction, and the next attempt finds the rows. A file that exists fails every attempt (409).
      await retryOnUniqueViolation(3, () =>
        this.transactions.run(async (tx) => {
          const found = await this.store.ensureVersion(tx, owner.id, GENERIC, ref.name, ref.version, creator.id, now);
          if (await this.store.findFile(found.version.id, ref.filename, tx)) throw fileExists();
          const blob =
            (await this.store.findBlob(staged.digests.sha256!, tx)) ??
            (await this.store.insertBlob(tx, {
              sha256: staged.digests.sha256!,
              md5: staged.digests.md5!,
              sha1: staged.digests.sha1!,
              sha512: staged.digests.sha512!,
              size: staged.size,
              createdUnix: now,
            }));
          // The first file of a version creates the package version: the `package` event `created`.
          const first = (await this.store.fileRowsOf(tx, found.version.id)).length === 0;
          await this.store.insertFile(tx, {
            versionId: found.version.id,
            blobId: blob.id,
            name: ref.filename,
            lowerName: ref.filename.toLowerCase(),
            createdUnix: now,
          });
          if (first) await this.recordEvent(tx, 'created', owner, creator, found);
          await reservation.settle(tx);
        }),
      );
      this.events.committed();
    } catch (error) {
      await staged.discard();
      if (isUniqueViolation(error)) throw fileExists();
      throw error;
    }
    faultPoint('package.committed');
    await staged.commit();
  }

  /** GET of a generic package file. */
  async download(viewer: AuthContext, ref: GenericFileRef): Promise<BlobDownload> {
    const owner = await this.readableOwner(viewer, ref.owner);
    assertGenericRef(ref);
    const found = await this.store.findVersion(owner.id, GENERIC, ref.name, ref.version);
    const stored = found ? await this.store.findFile(found.version.id, ref.filename) : null;
    if (!stored) throw new NotFoundError('package does not exist');
    const key = packageBlobKey(stored.blob.sha256);
    const size = await this.blobs.size(key);
    if (size === null) throw new NotFoundError('package does not exist');
    return { key, size, name: stored.file.name, modifiedUnix: stored.file.createdUnix };
  }

  /** DELETE of one file; the version (and package) go with their last file. */
  async deleteFile(viewer: AuthContext, ref: GenericFileRef): Promise<void> {
    const owner = await this.writableOwner(viewer, ref.owner);
    assertGenericRef(ref);
    const found = await this.store.findVersion(owner.id, GENERIC, ref.name, ref.version);
    const stored = found ? await this.store.findFile(found.version.id, ref.filename) : null;
    if (!found || !stored) throw new NotFoundError('package does not exist');
    const { unused, last } = await this.transactions.run(async (tx) => {
      // The version goes with its last file: that is the package's `deleted` event, as when the version is deleted.
      const last = (await this.store.fileRowsOf(tx, found.version.id)).length === 1;
      const removed = await this.store.deleteFiles(tx, [stored.file], found, false);
      if (last) await this.recordEvent(tx, 'deleted', owner, viewer.user!, found);
      return { unused: removed, last };
    });
    if (last) this.events.committed();
    await this.removeContent(unused);
  }

  /** DELETE /api/packages/{owner}/generic/{name}/{version} and DELETE /api/v1/packages/{owner}/{type}/{name}/{version}. */
  async deleteVersion(viewer: AuthContext, ownerName: string, type: string, name: string, version: string): Promise<void> {
    const owner = await this.writableOwner(viewer, ownerName);
    const found = await this.store.findVersion(owner.id, type, name, version);
    if (!found) throw new NotFoundError('package does not exist');
    const unused = await this.transactions.run(async (tx) => {
      const removed = await this.store.deleteFiles(tx, await this.store.fileRowsOf(tx, found.version.id), found, true);
      await this.recordEvent(tx, 'deleted', owner, viewer.user!, found);
      return removed;
    });
    this.events.committed();
    await this.removeContent(unused);
  }

  /** The `package` event for the owner's hooks, in the transaction of the change. */
  private async recordEvent(tx: EntityManager, action: 'created' | 'deleted', owner: UserEntity, sender: UserEntity, found: VersionOfPackage): Promise<void> {
    const creator = (await this.users.byId(found.version.creatorId, tx)) ?? owner;
    const wire = toPackageWire(owner, creator, found, AuthContext.anonymous(), this.siteUrls);
    await this.events.record(tx, { kind: 'package', action, ownerId: owner.id, senderId: sender.id, package: wire });
  }

  async list(viewer: AuthContext, ownerName: string, search: VersionSearch, page: PageQuery): Promise<Page<PackageWire>> {
    const owner = await this.readableOwner(viewer, ownerName);
    const versions = await this.store.searchVersions(owner.id, search, page);
    const creators = new Map((await this.users.byIds([...new Set(versions.items.map((item) => item.version.creatorId))])).map((user) => [user.id, user]));
    const site = this.siteUrls;
    return {
      items: versions.items.map((item) => toPackageWire(owner, creators.get(item.version.creatorId) ?? owner, item, viewer, site)),
      total: versions.total,
    };
  }

  async get(viewer: AuthContext, ownerName: string, type: string, name: string, version: string): Promise<PackageWire> {
    const { owner, found } = await this.version(viewer, ownerName, type, name, version);
    const creator = (await this.users.byId(found.version.creatorId)) ?? owner;
    return toPackageWire(owner, creator, found, viewer, this.siteUrls);
  }

  async files(viewer: AuthContext, ownerName: string, type: string, name: string, version: string): Promise<PackageFileWire[]> {
    const { found } = await this.version(viewer, ownerName, type, name, version);
    return (await this.store.filesOf(found.version.id)).map(toPackageFileWire);
  }

  private async version(
    viewer: AuthContext,
    ownerName: string,
    type: string,
    name: string,
    version: string,
  ): Promise<{ owner: UserEntity; found: VersionOfPackage }> {
    const owner = await this.readableOwner(viewer, ownerName);
    const found = await this.store.findVersion(owner.id, type, name, version);
    if (!found) throw new NotFoundError('package does not exist');
    return { owner, found };
  }

  private async removeContent(sha256s: string[]): Promise<void> {
    for (const sha256 of sha256s) {
      await this.blobs.remove(packageBlobKey(sha256)).catch((error: Error) => this.logger.error(`package blob ${sha256} kept its file: ${error.message}`));
    }
  }

  /** The owner's package versions for the quota views (docs/quota.md), largest first. */
  private async quotaList(ownerId: number, page: PageQuery): Promise<Page<QuotaUsedPackageWire>> {
    const owner = await this.users.byId(ownerId);
    if (!owner) return { items: [], total: 0 };
    const sized = await this.store.versionSizesOfOwner(ownerId, page);
    const site = this.siteUrls;
    return {
      total: sized.total,
      items: sized.items.map((item) => ({
        name: item.pkg.name,
        type: item.pkg.type,
        version: item.version.version,
        size: item.size,
        html_url: packageVersionHtmlUrl(owner, item, site),
      })),
    };
  }
}

export function packageBlobKey(sha256: string): string {
  return fannedKey('packages', sha256);
}

/** Forgejo answers 400 with the first broken rule. */
function assertGenericRef(ref: GenericFileRef): void {
  if (!isValidPackageName(ref.name)) throw new BadRequestError('invalid package name');
  if (!isValidFileName(ref.filename)) throw new BadRequestError('invalid filename');
  if (!isValidPackageVersion(ref.version)) throw new BadRequestError('invalid package version');
}

async function retryOnUniqueViolation<T>(attempts: number, work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= attempts || !isUniqueViolation(error)) throw error;
    }
  }
}

function fileExists(): ConflictError {
  return new ConflictError('package file already exists');
}
