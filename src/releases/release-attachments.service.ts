import { RepositoryPolicy, type RepositoryTarget } from '../access/repository-policy';
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { BlobStorage, StagedBlob } from '../blobs/blob-storage';
import type { IncomingUpload, UploadSource } from '../http/upload-body';
import { BadRequestError, NotFoundError } from '../common/errors';
import { faultPoint } from '../common/fault-points';
import { Page, PageQuery } from '../common/paging';
import { Clock } from '../common/time';
import { UploadConfig } from '../config/slices';
import { Transactions } from '../database/transactions';
import { QUOTA_GATE, QuotaGate, QuotaReservation } from '../quota/quota-gate';
import { QuotaUsageSources } from '../quota/quota-usage-sources';
import type { QuotaUsedAttachmentWire } from '../quota/quota.wire';
import { RepositoryEntity } from '../repos/repository.entity';
import { RepositoryDirectory } from '../repos/repository-directory';
import { UserAccounts } from '../users/user-accounts';
import { AttachmentEntity, ReleaseEntity } from './release.entities';
import { releaseUrls, toAttachmentWire, toAttachmentWires } from './release.mapper';
import type { EditAttachmentOption } from './release.options';
import { ReleaseStore } from './release.store';
import type { AttachmentWire } from './release.wire';
import { attachmentKey, ReleasesService, VisibleRelease } from './releases.service';
import { SiteUrls } from '../common/site-urls';
import { externalLink, externalName, releaseAssetUrl } from './external-assets';

/** A file to send: what the download routes need for their headers, and how to read it. */
export interface AttachmentDownload {
  name: string;
  size: number;
  key: string;
}

/** A download answer: the stored file, or the link of an external asset (Forgejo redirects there). */
export type AttachmentTarget = { file: AttachmentDownload } | { redirect: string };

/**
 * Release attachments: uploads stream to the blob store (never whole in memory) after every check has passed
 * (auth, write access, declared size, quota `size:assets:attachments:releases`); the row is written only once
 * the file is complete, so a failed or cut-off upload leaves neither.
 */
@Injectable()
export class ReleaseAttachmentsService implements OnModuleInit {
  private readonly logger = new Logger('ReleaseAttachmentsService');
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly releases: ReleasesService,
    private readonly policy: RepositoryPolicy,
    private readonly store: ReleaseStore,
    private readonly repositories: RepositoryDirectory,
    private readonly users: UserAccounts,
    private readonly blobs: BlobStorage,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly usageSources: QuotaUsageSources,
    private readonly uploadConfig: UploadConfig,
    @Inject(QUOTA_GATE) private readonly quota: QuotaGate,
  ) {}

  onModuleInit(): void {
    this.usageSources.register('attachmentsReleases', {
      bytesOf: (ownerId) => this.store.bytesOfOwner(ownerId),
      list: (ownerId, page) => this.quotaList(ownerId, page),
    });
  }

  async list(target: RepositoryTarget, releaseId: number): Promise<AttachmentWire[]> {
    const found = await this.releases.visible(target, releaseId);
    return toAttachmentWires(found, found.release, await this.store.attachmentsOf([found.release.id]), this.siteUrls);
  }

  async get(target: RepositoryTarget, releaseId: number, id: number): Promise<AttachmentWire> {
    const found = await this.releases.visible(target, releaseId);
    return this.wire(await this.attachmentOf(found.release, id));
  }

  /**
   * POST …/releases/{id}/assets: multipart field `attachment` (`name` in the query or an earlier form field
   * overrides its file name), the raw body with `?name=`, or (multipart) an `external_url` instead of a file
   * (Forgejo's external asset: a link, no file, no bytes counted). Nothing of the body is read before the checks.
   */
  async upload(target: RepositoryTarget, releaseId: number, upload: IncomingUpload, query: UploadQuery): Promise<AttachmentWire> {
    const viewer = target.viewer;
    const found = await this.releases.writable(target, releaseId);
    const maxBytes = this.uploadConfig.attachmentMaxBytes;
    upload.assertDeclaredLength(maxBytes);
    // The most this body can add is reserved before a byte of it is read, and settled with the row.
    const reservation = await this.quota.reserve(found.owner, 'size:assets:attachments:releases', 'attachmentsReleases', upload.declaredLength ?? maxBytes);
    try {
      return await this.receive(found, viewer, upload, query, maxBytes, reservation);
    } finally {
      await reservation.release();
    }
  }

  private async receive(
    found: VisibleRelease,
    viewer: AuthContext,
    upload: IncomingUpload,
    query: UploadQuery,
    maxBytes: number,
    reservation: QuotaReservation,
  ): Promise<AttachmentWire> {
    if (!upload.isMultipart) {
      // Forgejo: a raw body is always a file, so a link as well is one thing too many.
      if (query.externalUrl) throw new BadRequestError("'attachment' and 'external_url' are mutually exclusive");
      if (query.name === '') throw new BadRequestError('Could not determine name of attachment.');
      return this.storeFile(found, viewer, upload.raw(), query.name, maxBytes, reservation);
    }
    const { file, fields } = await upload.multipart('attachment');
    const externalUrl = query.externalUrl || fields.external_url || '';
    const name = query.name || fields.name || '';
    if (file && externalUrl) {
      file.stream.resume();
      throw new BadRequestError("'attachment' and 'external_url' are mutually exclusive");
    }
    if (file) return this.storeFile(found, viewer, file, name || file.filename, maxBytes, reservation);
    if (!externalUrl) throw new BadRequestError("One of 'attachment' or 'external_url' is required");
    const link = releaseAssetUrl(externalUrl);
    const attachment = await this.transactions.run(async (tx) => {
      if (!(await this.store.findById(found.repo.id, found.release.id, tx))) throw new NotFoundError();
      return this.store.insertAttachment(tx, {
        uuid: randomUUID(),
        repoId: found.repo.id,
        releaseId: found.release.id,
        uploaderId: viewer.user!.id,
        name: (name || externalName(link)).slice(0, 255),
        size: 0,
        externalUrl: link.href,
        createdUnix: this.clock.nowUnix(),
      });
    });
    return this.wire(attachment);
  }

  /** Streams the file to the blob store, then keeps it with its row. */
  private async storeFile(
    found: VisibleRelease,
    viewer: AuthContext,
    source: UploadSource,
    name: string,
    maxBytes: number,
    reservation: QuotaReservation,
  ): Promise<AttachmentWire> {
    if (name === '') {
      source.stream.resume();
      throw new BadRequestError('Could not determine name of attachment.');
    }
    const staged = await this.blobs.receive(source.stream, maxBytes);
    const attachment = await this.keep(staged, reservation, {
      uuid: randomUUID(),
      repoId: found.repo.id,
      releaseId: found.release.id,
      uploaderId: viewer.user!.id,
      name: name.slice(0, 255),
      size: staged.size,
      createdUnix: this.clock.nowUnix(),
    });
    return this.wire(attachment);
  }

  /**
   * The complete file is parked, the row committed (with the quota reservation settled), then the file renamed
   * under its key: the attachment is visible only with its row, and a crash after the commit leaves the parked
   * file for the start-up reconciliation to move. The release may have gone meanwhile (then neither is kept).
   */
  private async keep(staged: StagedBlob, reservation: QuotaReservation, row: Partial<AttachmentEntity> & { uuid: string }): Promise<AttachmentEntity> {
    let attachment: AttachmentEntity;
    try {
      await staged.park(attachmentKey(row.uuid));
      faultPoint('attachment.parked');
      attachment = await this.transactions.run(async (tx) => {
        if (!(await this.store.findById(row.repoId!, row.releaseId!, tx))) throw new NotFoundError();
        const inserted = await this.store.insertAttachment(tx, row);
        await reservation.settle(tx);
        return inserted;
      });
    } catch (error) {
      await staged.discard();
      throw error;
    }
    faultPoint('attachment.committed');
    await staged.commit();
    return attachment;
  }

  /**
   * PATCH …/assets/{id}: Forgejo answers 201 with the renamed attachment; `browser_download_url` changes the
   * link of an external asset only (400 for a stored file or a link that is not http(s)). Order (Forgejo): the
   * route's write 403, body 422 (the controller's binding), then the release and the attachment (404).
   */
  async edit(target: RepositoryTarget, releaseId: number, id: number, option: EditAttachmentOption): Promise<AttachmentWire> {
    const found = await this.releases.writable(target, releaseId);
    const attachment = await this.attachmentOf(found.release, id);
    const changes: Partial<AttachmentEntity> = {};
    if (option.name) changes.name = option.name;
    if (option.browser_download_url) {
      if (!attachment.externalUrl) throw new BadRequestError('existing attachment is not external');
      changes.externalUrl = releaseAssetUrl(option.browser_download_url).href;
    }
    await this.store.updateAttachment(attachment.id, changes);
    return this.wire({ ...attachment, ...changes });
  }

  async delete(target: RepositoryTarget, releaseId: number, id: number): Promise<void> {
    const found = await this.releases.writable(target, releaseId);
    const attachment = await this.attachmentOf(found.release, id);
    if (!(await this.transactions.run((tx) => this.store.deleteAttachment(tx, attachment.id)))) throw new NotFoundError();
    await this.releases.removeFiles([attachment.uuid]);
  }

  /** GET {ROOT_URL}attachments/{uuid}: the repository's read rules; drafts only for writers. */
  async downloadByUuid(viewer: AuthContext, uuid: string): Promise<AttachmentTarget> {
    const attachment = await this.store.findAttachmentByUuid(uuid);
    if (!attachment) throw new NotFoundError();
    const release = await this.store.findReleaseOf(attachment);
    const repo = release ? await this.repositories.byId(release.repoId) : null;
    const owner = repo ? await this.users.byId(repo.ownerId) : null;
    if (!release || !repo || !owner) throw new NotFoundError();
    // The attachment names its repository: the access policy's read rule for releases, as a route would apply it.
    await this.releases.visible(await this.policy.open(viewer, repo, owner, 'repo.releases'), release.id);
    return this.download(attachment);
  }

  /** GET {ROOT_URL}{owner}/{repo}/releases/download/{tag}/{name}. */
  async downloadByName(target: RepositoryTarget, tag: string, name: string): Promise<AttachmentTarget> {
    const found = await this.releases.visibleByTag(target, tag);
    const attachment = await this.store.findAttachmentByName(found.release.id, name);
    if (!attachment) throw new NotFoundError();
    return this.download(attachment);
  }

  /**
   * An external asset redirects to its link (as Forgejo, uncounted) only while that link is an absolute
   * http(s) URL; any other stored value (a relative or scheme-relative path, another scheme) is 404, so an
   * Anvil URL never forwards anywhere but to a web address named in the answer. A stored file is counted and sent.
   */
  private async download(attachment: AttachmentEntity): Promise<AttachmentTarget> {
    if (attachment.externalUrl) {
      const link = externalLink(attachment.externalUrl);
      if (!link) throw new NotFoundError();
      return { redirect: link };
    }
    const key = attachmentKey(attachment.uuid);
    const size = await this.blobs.size(key);
    if (size === null) throw new NotFoundError();
    await this.countDownload(attachment.id);
    return { file: { name: attachment.name, size, key } };
  }

  /** A count that cannot be written (a full disk, a database in trouble) never fails the download it counts. */
  private async countDownload(id: number): Promise<void> {
    try {
      await this.store.countDownload(id);
    } catch (error) {
      this.logger.warn(`the download of attachment ${id} was not counted: ${(error as Error).message}`);
    }
  }

  private async attachmentOf(release: ReleaseEntity, id: number): Promise<AttachmentEntity> {
    const attachment = await this.store.findAttachment(release.id, id);
    if (!attachment) throw new NotFoundError();
    return attachment;
  }

  /** One attachment, as Forgejo answers it: downloadable by uuid (a listing uses names: `list`). */
  private wire(attachment: AttachmentEntity): AttachmentWire {
    return toAttachmentWire(attachment, this.siteUrls);
  }

  /** The owner's release attachments for the quota views (docs/quota.md), largest first. */
  private async quotaList(ownerId: number, page: PageQuery): Promise<Page<QuotaUsedAttachmentWire>> {
    const owned = await this.store.listOfOwner(ownerId, page);
    const owner = await this.users.byId(ownerId);
    if (!owner) return { items: [], total: 0 };
    const site = this.siteUrls;
    return {
      total: owned.total,
      items: owned.items.map((item) => {
        const place = { owner, repo: Object.assign(new RepositoryEntity(), { name: item.repoName }) };
        const release = Object.assign(new ReleaseEntity(), { id: item.releaseId, tagName: item.tagName });
        const urls = releaseUrls(place, release, site);
        return {
          name: item.attachment.name,
          size: item.attachment.size,
          api_url: `${urls.api}/assets/${item.attachment.id}`,
          contained_in: { api_url: urls.api, html_url: urls.html },
        };
      }),
    };
  }
}

/** The query of an upload: `name` and `external_url`, '' when absent. */
export interface UploadQuery {
  name: string;
  externalUrl: string;
}
