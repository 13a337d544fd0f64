import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { BlobStore, fannedKey, PendingBlob } from '../blobs/blob-store';
import { APP_CONFIG, AppConfig } from '../config/config';
import { GitRepositories, isTransientGitFile, ObjectFormat } from '../git/git-repositories';
import { RepositoryPaths, repositoriesRoot } from '../git/repository-paths';
import { IntegrityStore, RepositoryRecord } from './integrity.store';

/** What one check found (and, when repairing, what was done about it). */
export interface Finding {
  kind:
    | 'repository-without-directory'
    | 'directory-without-repository'
    | 'stale-git-leftover'
    | 'size-recomputed'
    | 'emptiness-corrected'
    | 'parked-upload-finished'
    | 'stale-temporary-file'
    | 'blob-without-row'
    | 'attachment-without-file'
    | 'package-blob-without-file'
    | 'package-rows-without-file'
    | 'counter-drift';
  subject: string;
  /** What was done, or (report only) what `--fix` would do. */
  action: string;
}

export interface ReconciliationReport {
  findings: Finding[];
  repaired: boolean;
}

/**
 * Compares the database with DATA_DIR after a crash (at start-up, repairing) or on demand (`anvil doctor`,
 * reporting unless told to fix): repositories and their directories, uploads and their rows, package versions
 * and their files, git's and Anvil's temporary files, sizes and counters. Nothing that could be user data is
 * deleted: it is moved under DATA_DIR/lost+found, with a log line. Temporary files are touched only once they
 * are older than any live request of another instance sharing DATA_DIR could be (RECONCILE_STALE_AFTER).
 */
@Injectable()
export class Reconciliation {
  private readonly logger = new Logger('Reconciliation');
  private readonly dataDir: string;
  private readonly quarantine: string;

  constructor(
    private readonly store: IntegrityStore,
    private readonly git: GitRepositories,
    private readonly paths: RepositoryPaths,
    private readonly blobs: BlobStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.dataDir = path.resolve(config.dataDir);
    this.quarantine = path.join(this.dataDir, 'lost+found', new Date().toISOString().replace(/[:.]/g, '-'));
  }

  /** `allStale`: no other instance can be using DATA_DIR (a restore into it), so every leftover is one. */
  async run(options: { fix: boolean; allStale?: boolean }): Promise<ReconciliationReport> {
    const staleBefore = options.allStale ? Infinity : Date.now() - this.config.reconcileStaleAfterMs;
    const run = new Run(options.fix, staleBefore, this.logger);
    await this.repositories(run);
    await this.repositoryAreas(run);
    await this.temporaryFiles(run);
    await this.parkedUploads(run);
    await this.attachments(run);
    await this.packages(run);
    await this.counters(run);
    return { findings: run.findings, repaired: options.fix };
  }

  /** Each repository row against its directory: missing, leftovers inside, size and emptiness. */
  private async repositories(run: Run): Promise<void> {
    const root = repositoriesRoot(this.dataDir);
    // Directories are listed before the rows are read: one whose row commits meanwhile is then found with it.
    const directories = await this.repositoryDirectories(root);
    const rows = new Set<string>();
    for await (const page of this.store.repositories()) {
      for (const repo of page) {
        rows.add(`${repo.ownerName.toLowerCase()}/${repo.name.toLowerCase()}`);
        await this.repository(run, repo);
      }
    }
    const orphans = directories.filter(({ relative, mtimeMs }) => !rows.has(relative) && mtimeMs < run.staleBefore);
    // Read again: a repository created (or renamed here) since the rows were read is not a leftover.
    const current = orphans.length > 0 ? await this.store.repositoryPaths() : rows;
    for (const { relative, dir } of orphans) {
      if (current.has(relative)) continue;
      await run.found('directory-without-repository', relative, `moved to ${this.quarantined(dir)}`, () => this.moveToQuarantine(dir));
    }
  }

  private async repository(run: Run, repo: RepositoryRecord): Promise<void> {
    const dir = this.paths.repository(repo.ownerName, repo.name);
    const subject = `${repo.ownerName}/${repo.name}`;
    if (!(await isDirectory(dir))) {
      // Only a crash during a rename or a lost disk leaves this now: the repository answers again, empty.
      await run.found('repository-without-directory', subject, 'created again as an empty repository', async () => {
        await this.git.create(dir, { objectFormat: repo.objectFormatName as ObjectFormat, defaultBranch: repo.defaultBranch });
        await this.store.recordRepository(repo.id, { isEmpty: true, gitSize: await this.git.size(dir) });
      });
      return;
    }
    // A ref or pack newer than the last recorded change: a write whose recording (size, emptiness) a crash cut off.
    const changedSince = (await newestChange(dir)) >= repo.updatedUnix * 1000;
    let suspicious = repo.gitSize <= 0 || changedSince;
    for (const leftover of await this.gitLeftovers(dir, run.staleBefore)) {
      suspicious = true;
      await run.found('stale-git-leftover', `${subject}: ${path.relative(dir, leftover)}`, 'removed', () => fs.rm(leftover, { recursive: true, force: true }));
    }
    const branches = await branchesOf(dir);
    const isEmpty = branches.size === 0 ? true : branches.has(repo.defaultBranch) ? false : repo.isEmpty;
    if (isEmpty !== repo.isEmpty) {
      suspicious = true;
      await run.found('emptiness-corrected', subject, `empty set to ${isEmpty}`, () => this.store.recordRepository(repo.id, { isEmpty }));
    }
    if (suspicious) {
      const size = await this.git.size(dir);
      if (size !== repo.gitSize) {
        const updatedUnix = changedSince ? Math.floor(Date.now() / 1000) : undefined;
        await run.found('size-recomputed', subject, `size ${repo.gitSize} -> ${size}`, () => this.store.recordRepository(repo.id, { gitSize: size, updatedUnix }));
      }
    }
  }

  /** `owner/name` (lowercased, without `.git`) of every repository directory, with its time. */
  private async repositoryDirectories(root: string): Promise<{ relative: string; dir: string; mtimeMs: number }[]> {
    const found: { relative: string; dir: string; mtimeMs: number }[] = [];
    for (const owner of await directoryNames(root)) {
      if (owner.startsWith('.')) continue;
      for (const name of await directoryNames(path.join(root, owner))) {
        if (!name.endsWith('.git')) continue;
        const dir = path.join(root, owner, name);
        const stat = await fs.lstat(dir).catch(() => null);
        if (stat) found.push({ relative: `${owner}/${name.slice(0, -4)}`, dir, mtimeMs: stat.mtimeMs });
      }
    }
    return found;
  }

  /** git's and Anvil's transient files in a repository, older than any live operation. */
  private async gitLeftovers(dir: string, staleBefore: number): Promise<string[]> {
    const candidates: string[] = [];
    const collect = async (folder: string, recursive: boolean): Promise<void> => {
      let entries;
      try {
        entries = await fs.readdir(folder, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        const child = path.join(folder, entry.name);
        if (isTransientGitFile(entry.name)) candidates.push(child);
        else if (recursive && entry.isDirectory()) await collect(child, true);
      }
    };
    await collect(dir, false);
    await collect(path.join(dir, 'objects'), false);
    await collect(path.join(dir, 'objects', 'pack'), false);
    await collect(path.join(dir, 'refs'), true);
    const stale: string[] = [];
    for (const candidate of candidates) {
      const stat = await fs.lstat(candidate).catch(() => null);
      if (stat && stat.mtimeMs < staleBefore) stale.push(candidate);
    }
    return stale;
  }

  /** The trash (deletions interrupted after their commit) and the incoming area (repositories built aside). */
  private async repositoryAreas(run: Run): Promise<void> {
    for (const name of await entryNames(this.paths.trash())) {
      const entry = path.join(this.paths.trash(), name);
      await run.found('stale-temporary-file', path.relative(this.dataDir, entry), 'removed (a deleted repository)', () => fs.rm(entry, { recursive: true, force: true }));
    }
    for (const entry of await staleEntries(this.paths.incoming(), run.staleBefore)) {
      await run.found('stale-temporary-file', path.relative(this.dataDir, entry), 'removed (never made visible)', () => fs.rm(entry, { recursive: true, force: true }));
    }
  }

  /** Uploads cut off and temporary git indexes: never visible, removed once stale. */
  private async temporaryFiles(run: Run): Promise<void> {
    for (const area of [path.join(this.dataDir, 'tmp', 'uploads'), this.paths.gitIndexes()]) {
      for (const file of await staleFiles(area, run.staleBefore)) {
        await run.found('stale-temporary-file', path.relative(this.dataDir, file), 'removed (never made visible)', () => fs.rm(file, { force: true }));
      }
    }
  }

  /** Complete uploads parked before their row's commit: moved into place when the row exists. */
  private async parkedUploads(run: Run): Promise<void> {
    const pending = await this.blobs.pendingBlobs();
    const withRows = await this.rowsOfKeys(pending.map((blob) => blob.key));
    for (const blob of pending) {
      if (withRows.has(blob.key)) {
        await run.found('parked-upload-finished', blob.key, 'moved into place', () => this.blobs.finish(blob.file, blob.key));
      } else if (blob.mtimeMs < run.staleBefore) {
        await run.found('stale-temporary-file', path.relative(this.dataDir, blob.file), 'removed (its row never committed)', () => fs.rm(blob.file, { force: true }));
      }
    }
  }

  /** Attachment files without rows (quarantined) and stored attachments without files (rows removed). */
  private async attachments(run: Run): Promise<void> {
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
  private async packages(run: Run): Promise<void> {
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
      await run.found('package-rows-without-file', `${empty.versions} versions, ${empty.packages} packages`, 'removed', () => this.store.deleteEmptyPackageRows());
    }
  }

  private async blobsWithoutRows(run: Run, area: 'attachments' | 'packages'): Promise<void> {
    // Files are listed before rows are read; a file is renamed into place only after its row committed.
    const stored = await this.blobs.storedBlobs(area);
    const withRows = await this.rowsOfKeys(stored.map((blob) => blob.key));
    for (const blob of stored) {
      if (withRows.has(blob.key)) continue;
      await run.found('blob-without-row', blob.key, `moved to ${this.quarantined(this.blobs.fileOf(blob.key))}`, async () => {
        const file = this.blobs.fileOf(blob.key);
        const target = await this.moveToQuarantine(file);
        // An upload of the same content may have committed its row meanwhile (packages share content): put it back.
        if ((await this.rowsOfKeys([blob.key])).has(blob.key) && (await this.blobs.size(blob.key)) === null) await fs.rename(target, file);
      });
    }
  }

  private async counters(run: Run): Promise<void> {
    const drifts = await this.store.counterDrifts();
    for (const drift of drifts) {
      await run.found('counter-drift', `${drift.table}.${drift.column} (${drift.rows} rows)`, 'recounted', () => this.store.repairCounters([drift]));
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

  private quarantined(file: string): string {
    return path.join(this.quarantine, path.relative(this.dataDir, file));
  }

  private async moveToQuarantine(file: string): Promise<string> {
    const target = this.quarantined(file);
    await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    await fs.rename(file, target);
    return target;
  }
}

/** One reconciliation: what it found, logged as it goes, and repaired when asked. */
class Run {
  readonly findings: Finding[] = [];

  constructor(
    private readonly fix: boolean,
    readonly staleBefore: number,
    private readonly logger: Logger,
  ) {}

  async found(kind: Finding['kind'], subject: string, action: string, repair: () => Promise<unknown>): Promise<void> {
    if (!this.fix) {
      this.findings.push({ kind, subject, action: `would be ${action}` });
      return;
    }
    try {
      await repair();
      this.findings.push({ kind, subject, action });
      this.logger.warn(`${kind}: ${subject}: ${action}`);
    } catch (error) {
      // Another instance may have repaired the same thing first; a failure is reported, never fatal.
      this.findings.push({ kind, subject, action: `not repaired: ${(error as Error).message}` });
      this.logger.error(`${kind}: ${subject}: not repaired: ${(error as Error).message}`);
    }
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

async function isDirectory(dir: string): Promise<boolean> {
  return (await fs.lstat(dir).catch(() => null))?.isDirectory() ?? false;
}

async function entryNames(dir: string): Promise<string[]> {
  return fs.readdir(dir).catch(() => []);
}

async function directoryNames(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
}

async function staleEntries(dir: string, staleBefore: number): Promise<string[]> {
  const stale: string[] = [];
  for (const name of await entryNames(dir)) {
    const entry = path.join(dir, name);
    const stat = await fs.lstat(entry).catch(() => null);
    if (stat && stat.mtimeMs < staleBefore) stale.push(entry);
  }
  return stale;
}

/** Regular files under `dir`, at any depth, older than `staleBefore`. */
async function staleFiles(dir: string, staleBefore: number): Promise<string[]> {
  const stale: string[] = [];
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const child = path.join(dir, entry.name);
    if (entry.isDirectory()) stale.push(...(await staleFiles(child, staleBefore)));
    else {
      const stat = await fs.lstat(child).catch(() => null);
      if (stat && stat.mtimeMs < staleBefore) stale.push(child);
    }
  }
  return stale;
}

/** The newest modification time (ms) of the places a ref or object change touches: refs, packed-refs, objects. */
async function newestChange(dir: string): Promise<number> {
  let newest = 0;
  const stamp = async (file: string) => {
    const stat = await fs.lstat(file).catch(() => null);
    if (stat) newest = Math.max(newest, stat.mtimeMs);
    return stat;
  };
  await stamp(path.join(dir, 'packed-refs'));
  await stamp(path.join(dir, 'objects'));
  await stamp(path.join(dir, 'objects', 'pack'));
  const walk = async (folder: string): Promise<void> => {
    await stamp(folder);
    const entries = await fs.readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) if (entry.isDirectory()) await walk(path.join(folder, entry.name));
  };
  await walk(path.join(dir, 'refs'));
  return newest;
}

/** Branch names of a bare repository, from its loose refs and packed-refs, without spawning git. */
async function branchesOf(dir: string): Promise<Set<string>> {
  const branches = new Set<string>();
  const heads = path.join(dir, 'refs', 'heads');
  const walk = async (folder: string, prefix: string): Promise<void> => {
    const entries = await fs.readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (isTransientGitFile(entry.name)) continue;
      if (entry.isDirectory()) await walk(path.join(folder, entry.name), `${prefix}${entry.name}/`);
      else branches.add(`${prefix}${entry.name}`);
    }
  };
  await walk(heads, '');
  const packed = await fs.readFile(path.join(dir, 'packed-refs'), 'utf8').catch(() => '');
  for (const line of packed.split('\n')) {
    const match = /^[0-9a-f]+ refs\/heads\/(.+)$/.exec(line);
    if (match) branches.add(match[1]);
  }
  return branches;
}
