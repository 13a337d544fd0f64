import type { RepositoryTarget } from '../access/repository-policy';
import { Injectable } from '@nestjs/common';
import { NotFoundError, PayloadTooLargeError } from '../common/errors';
import { GitConfig } from '../config/slices';
import type { TreeEntry } from '../git/git-trees';
import { ContentRefs } from './content-refs';
import { Deliver, deliverGitOutput, deliverStream, sniffable } from './download-delivery';
import { ContentRepositories } from './content-repository';
import { assertSafePath } from './content-paths';
import { contentType } from './content.mapper';
import { sniffContentType } from './media-types';
import { GitReads } from '../git/git-reads';
import { LfsMedia } from '../lfs/lfs-media';

const SNIFF_BYTES = 1024;
/** Raw files up to this size come whole from a batch reader; larger ones stream from their own `cat-file`. */
export const RAW_FROM_READER_BYTES = 1024 * 1024;

function disposition(kind: 'inline' | 'attachment', filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/**
 * Raw files and archives, streamed from git (`cat-file blob`, `git archive`) and never buffered whole. The git
 * process holds a slot of the process cap until the last byte is sent; a reader that goes away stops git.
 */
@Injectable()
export class DownloadsService {
  constructor(
    private readonly repositories: ContentRepositories,
    private readonly reads: GitReads,
    private readonly refs: ContentRefs,
    private readonly gitConfig: GitConfig,
    private readonly lfs: LfsMedia,
  ) {}

  /**
   * GET /raw/{filepath} and /media/{filepath}: `ref` from the query, else the path starts with a branch, tag or
   * commit (Forgejo's RepoRefForAPI), else the default branch. Directories and submodules are 404.
   */
  async raw(repository: RepositoryTarget, rawPath: string, refName: string | undefined, ifNoneMatch: string | undefined, deliver: Deliver): Promise<void> {
    return this.file(repository, rawPath, refName, ifNoneMatch, deliver, false);
  }

  /**
   * GET /media/{filepath}: as /raw, except that a pointer file whose object the repository holds is answered
   * with the object (its oid the ETag); any other file, a pointer to an object it lacks included, as /raw.
   */
  async media(repository: RepositoryTarget, rawPath: string, refName: string | undefined, ifNoneMatch: string | undefined, deliver: Deliver): Promise<void> {
    return this.file(repository, rawPath, refName, ifNoneMatch, deliver, true);
  }

  private async file(
    repository: RepositoryTarget,
    rawPath: string,
    refName: string | undefined,
    ifNoneMatch: string | undefined,
    deliver: Deliver,
    media: boolean,
  ): Promise<void> {
    const target = this.repositories.open(repository);
    const requested = assertSafePath(rawPath);
    if (target.repo.isEmpty || requested === '') throw new NotFoundError();
    // The ref, the entry and a small file come from the batch readers (no process start, no slot held).
    const { path, entry } = await this.repositories.withReaders(async () => {
      const split = refName
        ? { ref: await this.refs.resolve(target, refName, this.reads.objects), path: requested }
        : await this.refs.split(target, requested, this.reads.objects);
      if (!split.ref || split.path === '') return { path: split.path, entry: null };
      return { path: split.path, entry: await this.reads.objects.entry(target.dir, split.ref.commit, split.path) };
    });
    if (!entry || (contentType(entry) !== 'file' && contentType(entry) !== 'symlink')) throw new NotFoundError();
    const notModified = (etag: string) =>
      ifNoneMatch !== undefined &&
      ifNoneMatch
        .split(',')
        .map((tag) => tag.trim())
        .includes(etag);
    let small: Buffer | null = null;
    if (media && entry.size <= this.lfs.maxPointerBytes) {
      small = await this.repositories.withReaders(() => this.reads.objects.blob(target.dir, entry.oid));
      if (!small) throw new NotFoundError();
      const object = await this.lfs.behind(target.repo.id, small);
      if (object) {
        const etag = `"${object.oid}"`;
        if (notModified(etag)) return deliver({ status: 304, headers: { ETag: etag }, body: null });
        const type = sniffContentType(await object.head(SNIFF_BYTES));
        return deliver({
          status: 200,
          headers: { ...rawHeaders(entry, path, type), 'Content-Length': String(object.size), ETag: etag },
          body: object.size === 0 ? Buffer.alloc(0) : object.open(),
        });
      }
    }
    const etag = `"${entry.oid}"`;
    if (notModified(etag)) return deliver({ status: 304, headers: { ETag: etag }, body: null });
    if (entry.size <= RAW_FROM_READER_BYTES) {
      const bytes = small ?? (await this.repositories.withReaders(() => this.reads.objects.blob(target.dir, entry.oid)));
      if (!bytes) throw new NotFoundError();
      return deliver({ status: 200, headers: rawHeaders(entry, path, sniffContentType(bytes.subarray(0, SNIFF_BYTES))), body: bytes });
    }
    await this.repositories.withGit(async () => {
      const stream = this.reads.trees.streamBlob(target.dir, entry.oid);
      const { head, body } = await sniffable(stream, SNIFF_BYTES);
      await deliverStream(stream, { status: 200, headers: rawHeaders(entry, path, sniffContentType(head)), body }, deliver);
    });
  }

  /** GET /archive/{ref}.zip and .tar.gz: every file under `<repo>/`, named `<repo>-<ref>.<ext>`. */
  async archive(repository: RepositoryTarget, archive: string, deliver: Deliver): Promise<void> {
    const target = this.repositories.open(repository);
    const format = archive.endsWith('.zip') ? 'zip' : archive.endsWith('.tar.gz') ? 'tar.gz' : null;
    if (!format) throw new NotFoundError();
    const refName = archive.slice(0, -(format.length + 1));
    if (target.repo.isEmpty || refName === '') throw new NotFoundError();
    await this.repositories.withGit(async () => {
      const ref = await this.refs.resolve(target, refName);
      if (!ref) throw new NotFoundError();
      const budget = { entries: this.gitConfig.archiveMaxEntries, bytes: this.gitConfig.archiveMaxBytes };
      if (!(await this.reads.trees.withinBudget(target.dir, ref.commit, budget))) {
        throw new PayloadTooLargeError(`the archive would hold more than ${budget.entries} files or ${budget.bytes} bytes`);
      }
      const stream = this.reads.trees.streamArchive(target.dir, ref.commit, format, target.repo.name);
      const filename = `${target.repo.name}-${refName.replace(/\//g, '-')}.${format}`;
      const headers = {
        'Content-Type': format === 'zip' ? 'application/zip' : 'application/gzip',
        'Content-Disposition': disposition('attachment', filename),
        'Access-Control-Expose-Headers': 'Content-Disposition',
      };
      await deliverGitOutput(stream, headers, deliver);
    });
  }
}

function rawHeaders(entry: TreeEntry, path: string, type: string): Record<string, string> {
  const headers: Record<string, string> = {
    'Content-Type': type,
    'Content-Length': String(entry.size),
    'Content-Disposition': disposition('inline', path.split('/').pop() ?? path),
    ETag: `"${entry.oid}"`,
    'Access-Control-Expose-Headers': 'Content-Disposition',
  };
  if (type === 'image/svg+xml') headers['Content-Security-Policy'] = "default-src 'none'; style-src 'unsafe-inline'; sandbox";
  return headers;
}
