import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { Injectable, Logger } from '@nestjs/common';
import { IntegrityConfig, StorageConfig } from '../config/slices';
import { GitRepositories, ObjectFormat } from '../git/git-repositories';
import { RepositoryPaths, repositoriesRoot, repositoryLeaseKey } from '../git/repository-paths';
import { JournalledChange, RepositoryJournal } from '../git/repository-journal';
import { Leases, LeaseTimeout } from '../database/leases';
import { IntegrityStore, RepositoryRecord } from './integrity.store';
import { BlobReconciliation } from './blob-reconciliation';
import { branchesOf, entryNames, gitLeftovers, isDirectory, newestChange, repositoryDirectories, staleEntries, staleFiles } from './data-dir-scan';
import { ReconciliationReport, Run } from './reconciliation-run';
import { SweepPace } from './sweep-pace';

export type { Finding, ReconciliationReport } from './reconciliation-run';

/** How a sweep runs: repairing or not, resting between repositories (`serving`: requests arrived), stoppable. */
interface SweepOptions {
  fix: boolean;
  throttled?: boolean;
  signal?: AbortSignal;
  serving?: () => boolean;
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
    private readonly journal: RepositoryJournal,
    private readonly leases: Leases,
    private readonly blobChecks: BlobReconciliation,
    private readonly storageConfig: StorageConfig,
    private readonly integrityConfig: IntegrityConfig,
  ) {
    this.dataDir = path.resolve(storageConfig.dataDir);
    this.quarantine = path.join(this.dataDir, 'lost+found', new Date().toISOString().replace(/[:.]/g, '-'));
  }

  /**
   * `allStale`: no other instance can be using DATA_DIR (a restore into it), so every leftover is one.
   * `startUp`: the bounded checks of a start (the leftovers, then a share of the sweep); otherwise the full walk.
   */
  async run(options: { fix: boolean; allStale?: boolean; startUp?: boolean }): Promise<ReconciliationReport> {
    if (options.startUp) {
      const leftovers = await this.leftovers(options);
      const swept = await this.sweep({ fix: options.fix });
      return { findings: [...leftovers.findings, ...swept.findings], repaired: options.fix, swept: swept.swept };
    }
    const run = this.newRun(options);
    await this.journalled(run);
    const swept = await this.repositories(run);
    await this.leftoverAreas(run);
    await this.blobChecks.attachments(run);
    await this.blobChecks.packages(run);
    await this.blobChecks.lfs(run);
    await this.counters(run);
    await this.collations(run);
    return { findings: run.findings, repaired: options.fix, swept };
  }

  /**
   * What a crash can leave half-made where a request would meet it: the journal of repository moves in flight,
   * the incoming and trash areas, parked uploads, temporary files. Its cost follows what a crash left, not the
   * number of repositories, so a start runs it before it listens.
   */
  async leftovers(options: { fix: boolean; allStale?: boolean }): Promise<ReconciliationReport> {
    const run = this.newRun(options);
    await this.journalled(run);
    await this.leftoverAreas(run);
    return { findings: run.findings, repaired: options.fix, swept: 0 };
  }

  /**
   * A start's share of the incremental sweep: up to RECONCILE_START_BUDGET repositories after the cursor kept in
   * the database, wrapping to the first at the end; one instance sweeps at a time (a lease), the others skip it.
   * A start runs it after it listens. `throttled`: after each repository it rests (SweepPace), longer while
   * `serving` says requests arrived, so that it takes little from the requests being served; `signal` stops it
   * between two repositories (the cursor then records how far it came).
   */
  async sweep(options: SweepOptions): Promise<ReconciliationReport> {
    const run = this.newRun(options);
    const swept = await this.sweepSome(run, this.integrityConfig.reconcileStartBudget, options);
    return { findings: run.findings, repaired: options.fix, swept };
  }

  private newRun(options: { fix: boolean; allStale?: boolean }): Run {
    const staleBefore = options.allStale ? Infinity : Date.now() - this.integrityConfig.reconcileStaleAfterMs;
    return new Run(options.fix, staleBefore, this.logger, this.dataDir, this.quarantine);
  }

  private async leftoverAreas(run: Run): Promise<void> {
    await this.repositoryAreas(run);
    await this.temporaryFiles(run);
    await this.blobChecks.parkedUploads(run);
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
      await run.found('directory-without-repository', subject, `moved to ${run.quarantined(entry.to)} (a ${entry.kind} cut off)`, async () => {
        await run.moveToQuarantine(entry.to);
        await clear();
      });
    } else {
      await run.found('journal-entry-cleared', `${entry.kind} ${subject}`, 'journal entry removed (row and directory agree)', clear);
    }
  }

  /** Up to `budget` repositories after the cursor (see sweep); answers how many it checked. */
  private async sweepSome(run: Run, budget: number, options: Omit<SweepOptions, 'fix'>): Promise<number> {
    if (budget <= 0 || options.signal?.aborted) return 0;
    const pace = options.throttled ? new SweepPace(options.serving) : undefined;
    try {
      return await this.leases.run(
        SWEEP_LEASE,
        async () => {
          const after = (await this.leases.markOf(SWEEP_CURSOR)).moment;
          let page = await this.store.repositoryPage(after, budget);
          if (page.length === 0 && after > 0) page = await this.store.repositoryPage(0, budget);
          let checked = 0;
          for (const repo of page) {
            if (options.signal?.aborted) break;
            const started = performance.now();
            await this.repository(run, repo);
            checked += 1;
            await pace?.rest(performance.now() - started, options.signal);
          }
          const finished = checked === page.length && page.length < budget;
          const cursor = finished ? 0 : checked === 0 ? after : page[checked - 1].id;
          if (run.fix) await this.leases.record(SWEEP_CURSOR, cursor);
          return checked;
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
    const directories = await repositoryDirectories(root);
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
      await run.found('directory-without-repository', relative, `moved to ${run.quarantined(dir)}`, () => run.moveToQuarantine(dir));
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
    for (const leftover of await gitLeftovers(dir, run.staleBefore)) {
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
        await run.found('size-recomputed', subject, `size ${repo.gitSize} -> ${size}`, () =>
          this.store.recordRepository(repo.id, { gitSize: size, updatedUnix }),
        );
      }
    }
  }

  /** The trash (deletions interrupted after their commit) and the incoming area (repositories built aside). */
  private async repositoryAreas(run: Run): Promise<void> {
    for (const name of await entryNames(this.paths.trash())) {
      const entry = path.join(this.paths.trash(), name);
      await run.found('stale-temporary-file', path.relative(this.dataDir, entry), 'removed (a deleted repository)', () =>
        fs.rm(entry, { recursive: true, force: true }),
      );
    }
    for (const entry of await staleEntries(this.paths.incoming(), run.staleBefore)) {
      await run.found('stale-temporary-file', path.relative(this.dataDir, entry), 'removed (never made visible)', () =>
        fs.rm(entry, { recursive: true, force: true }),
      );
    }
    // An object pool no row names: built for a first fork that never committed, or left when its last member's
    // removal was cut off. Quarantined rather than deleted, as a directory without its row is: a member directory
    // quarantined earlier may still reach it.
    for (const entry of await staleEntries(this.paths.pools(), run.staleBefore)) {
      if (await this.store.namesPool(path.basename(entry).replace(/\.git$/, ''))) continue;
      await run.found('pool-without-members', path.relative(this.dataDir, entry), `moved to ${run.quarantined(entry)}`, () => run.moveToQuarantine(entry));
    }
  }

  /** Uploads cut off and temporary git indexes: never visible, removed once stale. */
  private async temporaryFiles(run: Run): Promise<void> {
    for (const area of [path.join(this.dataDir, 'tmp', 'uploads'), this.paths.gitIndexes()]) {
      for (const file of await staleFiles(area, run.staleBefore)) {
        await run.found('stale-temporary-file', path.relative(this.dataDir, file), 'removed (never made visible)', () => fs.rm(file, { force: true }));
      }
    }
    // A journal entry a crash cut off while it was being written: its change never began.
    for (const file of await staleFiles(this.paths.journal(), run.staleBefore)) {
      if (!file.endsWith('.partial')) continue;
      await run.found('stale-temporary-file', path.relative(this.dataDir, file), 'removed (a journal entry never completed)', () =>
        fs.rm(file, { force: true }),
      );
    }
  }

  /**
   * Tables whose text does not compare byte for byte (MySQL/MariaDB): reported, never converted here, since the
   * conversion rebuilds the table and holds its writes meanwhile (on Galera, the whole cluster's).
   */
  private async collations(run: Run): Promise<void> {
    for (const { table, collation } of await this.store.tablesNotComparingBytes()) {
      run.leftToOperator(
        'table-collation',
        `${table} (${collation})`,
        `while Anvil is stopped: ALTER TABLE \`${table}\` CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`,
      );
    }
  }

  private async counters(run: Run): Promise<void> {
    const drifts = await this.store.counterDrifts();
    for (const drift of drifts) {
      await run.found('counter-drift', `${drift.table}.${drift.column} (${drift.rows} rows)`, 'recounted', () => this.store.repairCounters([drift]));
    }
  }
}
