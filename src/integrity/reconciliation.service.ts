import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { Injectable, Logger } from '@nestjs/common';
import { BlobStorage, fannedKey, PendingBlob } from '../blobs/blob-storage';
import { IntegrityConfig, StorageConfig } from '../config/slices';
import { GitRepositories, isTransientGitFile, ObjectFormat } from '../git/git-repositories';
import { RepositoryPaths, repositoriesRoot, repositoryLeaseKey } from '../git/repository-paths';
import { JournalledChange, RepositoryJournal } from '../git/repository-journal';
import { Leases, LeaseTimeout } from '../database/leases';
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
    | 'counter-drift'
    | 'rename-completed'
    | 'rename-rolled-back'
    | 'journal-entry-cleared';
  subject: string;
  /** What was done, or (report only) what `--fix` would do. */
  action: string;
}

export interface ReconciliationReport {
  findings: Finding[];
  repaired: boolean;
  /** Repositories checked in full (every one, or a start-up's share of the incremental sweep). */
  swept: number;
}

/** Where the incremental sweep stopped (the last repository id it checked), and who may run it. */
const SWEEP_LEASE = 'reconciliation-sweep';
const SWEEP_CURSOR = 'reconciliation-sweep-cursor';

/**
 * Compares the database with DATA_DIR after a crash (at start-up, repairing) or on demand (`anvil doctor`,
 * reporting unless told to fix). Nothing that could be user data is deleted: it is moved under
 * DATA_DIR/lost+found, with a log line. Temporary files are touched only once they are older than any live
 * request of another instance sharing DATA_DIR could be (RECONCILE_STALE_AFTER).
 *
 * At start-up it is bounded: it looks only where a crash can leave something half-made (the journal of
 * repository moves in flight, the incoming and trash areas, parked uploads, temporary files), then checks
 * RECONCILE_START_BUDGET repositories in full, continuing where the previous start stopped (a cursor in the
 * database; one instance at a time sweeps). The full walk (every repository, directory, blob and counter) is
 * `anvil doctor`'s, and a restore's.
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
    private readonly blobs: BlobStorage,
    private readonly journal: RepositoryJournal,
    private readonly leases: Leases,
    private readonly storageConfig: StorageConfig,
    private readonly integrityConfig: IntegrityConfig,
  ) {
    this.dataDir = path.resolve(storageConfig.dataDir);
    this.quarantine = path.join(this.dataDir, 'lost+found', new Date().toISOString().replace(/[:.]/g, '-'));
  }

  /**
   * `allStale`: no other instance can be using DATA_DIR (a restore into it), so every leftover is one.
   * `startUp`: the bounded checks of a start (see above); otherwise the full walk.
   */
  async run(options: { fix: boolean; allStale?: boolean; startUp?: boolean }): Promise<ReconciliationReport> {
    const staleBefore = options.allStale ? Infinity : Date.now() - this.integrityConfig.reconcileStaleAfterMs;
    const run = new Run(options.fix, staleBefore, this.logger);
    await this.journalled(run);
    let swept: number;
    if (options.startUp) {
      swept = await this.sweepSome(run, this.integrityConfig.reconcileStartBudget);
    } else {
      swept = await this.repositories(run);
    }
    await this.repositoryAreas(run);
    await this.temporaryFiles(run);
    await this.parkedUploads(run);
    if (!options.startUp) {
      await this.attachments(run);
      await this.packages(run);
      await this.counters(run);
    }
    return { findings: run.findings, repaired: options.fix, swept };
  }

  /**
   * Repository moves a crash cut off (repository-journal.ts), each under the leases of its paths, so that a
   * live change of another instance finishes first (and removes its entry); a dead one's lease lapses.
   */
  private async journalled(run: Run): Promise<void> {
    const pathLeases = this.leases.keyed('repository-path');
    for (const entry of await this.journal.pending()) {
      const keys = entry.kind === 'rename' ? [repositoryLeaseKey(entry.from), repositoryLeaseKey(entry.to)] : [repositoryLeaseKey(entry.to)];
      const settle = async () => {
        if (!(await this.journal.holds(entry))) return;
        if (entry.kind === 'rename') await this.interruptedRename(run, entry);
        else await this.interruptedPlacement(run, entry);
      };
      if (run.fix) await pathLeases.runAll(keys, settle);
      else await settle();
    }
  }

  /** A rename: completed when the row has the new name, undone when it has the old one. */
  private async interruptedRename(run: Run, entry: JournalledChange & { kind: 'rename' }): Promise<void> {
    const root = repositoriesRoot(this.dataDir);
    const subject = `${path.relative(root, entry.from)} -> ${path.relative(root, entry.to)}`;
    const clear = () => fs.rm(entry.file, { force: true });
    const repo = await this.store.repositoryById(entry.repoId);
    const rowDir = repo ? this.paths.repository(repo.ownerName, repo.name) : undefined;
    const [atFrom, atTo] = [await isDirectory(entry.from), await isDirectory(entry.to)];
    if (rowDir === entry.to && !atTo && atFrom) {
      await run.found('rename-completed', subject, 'directory moved to the name the row has', async () => {
        await this.git.move(entry.from, entry.to);
        await clear();
      });
    } else if (rowDir === entry.from && !atFrom && atTo) {
      await run.found('rename-rolled-back', subject, 'directory moved back to the name the row has', async () => {
        await this.git.move(entry.to, entry.from);
        await clear();
      });
    } else {
      await run.found('journal-entry-cleared', `rename ${subject}`, 'journal entry removed (row and directory agree)', clear);
    }
  }

  /** A creation or deletion: the directory stays when its row exists, and is quarantined when not. */
  private async interruptedPlacement(run: Run, entry: JournalledChange & { kind: 'create' | 'delete' }): Promise<void> {
    const subject = path.relative(repositoriesRoot(this.dataDir), entry.to);
    const clear = () => fs.rm(entry.file, { force: true });
    const row = await this.store.repositoryAt(path.basename(path.dirname(entry.to)), path.basename(entry.to).replace(/\.git$/, ''));
    if (!row && (await isDirectory(entry.to))) {
      await run.found('directory-without-repository', subject, `moved to ${this.quarantined(entry.to)} (a ${entry.kind} cut off)`, async () => {
        await this.moveToQuarantine(entry.to);
        await clear();
      });
    } else {
      await run.found('journal-entry-cleared', `${entry.kind} ${subject}`, 'journal entry removed (row and directory agree)', clear);
    }
  }

  /**
   * The start-up's share of the full sweep: up to `budget` repositories after the cursor, wrapping to the first
   * at the end. Only one instance sweeps at a time (a lease), the others skip it. Answers how many it checked.
   */
  private async sweepSome(run: Run, budget: number): Promise<number> {
    if (budget <= 0) return 0;
    try {
      return await this.leases.run(
        SWEEP_LEASE,
        async () => {
          const after = (await this.leases.markOf(SWEEP_CURSOR)).moment;
          let page = await this.store.repositoryPage(after, budget);
          if (page.length === 0 && after > 0) page = await this.store.repositoryPage(0, budget);
          for (const repo of page) await this.repository(run, repo);
          if (run.fix) await this.leases.record(SWEEP_CURSOR, page.length < budget ? 0 : page[page.length - 1].id);
          return page.length;
        },
        { waitMs: 0 },
      );
    } catch (error) {
      if (error instanceof LeaseTimeout) return 0;
      throw error;
    }
  }

  /** Each repository row against its directory: missing, leftovers inside, size and emptiness. */
  private async repositories(run: Run): Promise<number> {
    let swept = 0;
    const root = repositoriesRoot(this.dataDir);
    // Directories are listed before the rows are read: one whose row commits meanwhile is then found with it.
    const directories = await this.repositoryDirectories(root);
    const rows = new Set<string>();
    for await (const page of this.store.repositories()) {
      for (const repo of page) {
        rows.add(`${repo.ownerName.toLowerCase()}/${repo.name.toLowerCase()}`);
        await this.repository(run, repo);
        swept += 1;
      }
    }
    const orphans = directories.filter(({ relative, mtimeMs }) => !rows.has(relative) && mtimeMs < run.staleBefore);
    // Read again: a repository created (or renamed here) since the rows were read is not a leftover.
    const current = orphans.length > 0 ? await this.store.repositoryPaths() : rows;
    for (const { relative, dir } of orphans) {
      if (current.has(relative)) continue;
      await run.found('directory-without-repository', relative, `moved to ${this.quarantined(dir)}`, () => this.moveToQuarantine(dir));
    }
    return swept;
  }

  private async repository(run: Run, repo: RepositoryRecord): Promise<void> {
    const dir = this.paths.repository(repo.ownerName, repo.name);
    const subject = `${repo.ownerName}/${repo.name}`;
    if (!(await isDirectory(dir))) {
      // A rename a crash cut off is journalled (and paired back above): only a lost disk leaves this now. The
      // repository answers again, empty.
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
    readonly fix: boolean,
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
