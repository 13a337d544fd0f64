import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { Injectable } from '@nestjs/common';
import { BlobStorage, fannedKey, PendingBlob } from '../blobs/blob-storage';
import { lfsKey } from '../lfs/lfs-content';
import { IntegrityStore } from './integrity.store';
import { Run } from './reconciliation-run';

/**
 * The reconciliation's checks of uploaded files (attachments, package files, LFS objects) against their rows: parked uploads
 * finished or cleared, files without rows quarantined, rows without files removed.
 */
@Injectable()
export class BlobReconciliation {
  constructor(
    private readonly store: IntegrityStore,
    private readonly blobs: BlobStorage,
  ) {}

  /** Complete uploads parked before their row's commit: moved into place when the row exists. */
  async parkedUploads(run: Run): Promise<void> {
    const pending = await this.blobs.pendingBlobs();
    const withRows = await this.rowsOfKeys(pending.map((blob) => blob.key));
    for (const blob of pending) {
      if (withRows.has(blob.key)) {
        await run.found('parked-upload-finished', blob.key, 'moved into place', () => this.blobs.finish(blob.file, blob.key));
      } else if (blob.mtimeMs < run.staleBefore) {
        await run.found('stale-temporary-file', path.relative(run.dataDir, blob.file), 'removed (its row never committed)', () =>
          fs.rm(blob.file, { force: true }),
        );
      }
    }
  }

  /** Attachment files without rows (quarantined) and stored attachments without files (rows removed). */
  async attachments(run: Run): Promise<void> {
    await this.blobsWithoutRows(run, 'attachments');
    for await (const page of this.store.storedAttachments()) {
      const parked = keysOf(await this.blobs.pendingBlobs());
      for (const attachment of page) {
        const key = attachmentKeyOf(attachment.uuid);
        if (parked.has(key) || (await this.blobs.size(key)) !== null) continue;
        await run.found('attachment-without-file', key, 'row removed (its file is lost)', () => this.store.deleteAttachment(attachment.id));
      }
    }
  }

  /** Package files without blob rows, blob rows without files, versions without files. */
  async packages(run: Run): Promise<void> {
    await this.blobsWithoutRows(run, 'packages');
    for await (const page of this.store.packageBlobRows()) {
      const parked = keysOf(await this.blobs.pendingBlobs());
      for (const blob of page) {
        const key = packageKeyOf(blob.sha256);
        if (parked.has(key) || (await this.blobs.size(key)) !== null) continue;
        await run.found('package-blob-without-file', key, 'blob and file rows removed (the content is lost)', () => this.store.deletePackageBlob(blob.id));
      }
    }
    const empty = await this.store.emptyPackageRows();
    if (empty.versions + empty.packages > 0) {
      await run.found('package-rows-without-file', `${empty.versions} versions, ${empty.packages} packages`, 'removed', () =>
        this.store.deleteEmptyPackageRows(),
      );
    }
  }

  /**
   * LFS objects: a file is placed before its first row commits, so a crash between the two leaves a file that no
   * repository holds; one older than the stale age is moved to lost+found (younger, its row may still be on its
   * way). An object whose file is lost loses its rows, and the repositories that held it their bytes.
   */
  async lfs(run: Run): Promise<void> {
    const stored = (await this.blobs.storedBlobs('lfs')).filter((blob) => /^lfs\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}$/.test(blob.key));
    const held = await this.store.lfsOids(stored.map((blob) => lastSegment(blob.key)));
    for (const blob of stored) {
      const oid = lastSegment(blob.key);
      if (held.has(oid) || blob.mtimeMs >= run.staleBefore) continue;
      await run.found('blob-without-row', blob.key, `moved to ${run.quarantined(this.blobs.fileOf(blob.key))}`, async () => {
        const file = this.blobs.fileOf(blob.key);
        const target = await run.moveToQuarantine(file);
        // A link or upload of the object may have written its row meanwhile: it finds the file back.
        if ((await this.store.lfsOids([oid])).has(oid) && (await this.blobs.size(blob.key)) === null) await fs.rename(target, file);
      });
    }
    for await (const page of this.store.lfsObjectOids()) {
      for (const oid of page) {
        const key = lfsKey(oid);
        if ((await this.blobs.size(key)) !== null) continue;
        await run.found('lfs-object-without-file', key, 'rows removed (the content is lost)', () => this.store.deleteLfsObjectRows(oid));
      }
    }
  }

  private async blobsWithoutRows(run: Run, area: 'attachments' | 'packages'): Promise<void> {
    // Files are listed before rows are read; a file is renamed into place only after its row committed.
    const stored = await this.blobs.storedBlobs(area);
    const withRows = await this.rowsOfKeys(stored.map((blob) => blob.key));
    for (const blob of stored) {
      if (withRows.has(blob.key)) continue;
      await run.found('blob-without-row', blob.key, `moved to ${run.quarantined(this.blobs.fileOf(blob.key))}`, async () => {
        const file = this.blobs.fileOf(blob.key);
        const target = await run.moveToQuarantine(file);
        // An upload of the same content may have committed its row meanwhile (packages share content): put it back.
        if ((await this.rowsOfKeys([blob.key])).has(blob.key) && (await this.blobs.size(blob.key)) === null) await fs.rename(target, file);
      });
    }
  }

  /** Which of the blob keys have their row. */
  private async rowsOfKeys(keys: string[]): Promise<Set<string>> {
    const uuids = keys.filter((key) => key.startsWith('attachments/')).map(lastSegment);
    const sha256s = keys.filter((key) => key.startsWith('packages/')).map(lastSegment);
    const attachments = await this.store.attachmentUuids(uuids);
    const blobs = await this.store.packageBlobs(sha256s);
    return new Set(keys.filter((key) => (key.startsWith('attachments/') ? attachments.has(lastSegment(key)) : blobs.has(lastSegment(key)))));
  }
}

function lastSegment(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}

function keysOf(blobs: PendingBlob[]): Set<string> {
  return new Set(blobs.map((blob) => blob.key));
}

function attachmentKeyOf(uuid: string): string {
  return fannedKey('attachments', uuid);
}

function packageKeyOf(sha256: string): string {
  return fannedKey('packages', sha256);
}
