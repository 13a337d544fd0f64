import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { Logger } from '@nestjs/common';

/** What one check found (and, when repairing, what was done about it). */
export interface Finding {
  kind:
    | 'repository-without-directory'
    | 'directory-without-repository'
    | 'pool-without-members'
    | 'stale-git-leftover'
    | 'size-recomputed'
    | 'emptiness-corrected'
    | 'parked-upload-finished'
    | 'stale-temporary-file'
    | 'blob-without-row'
    | 'attachment-without-file'
    | 'package-blob-without-file'
    | 'package-rows-without-file'
    | 'lfs-object-without-file'
    | 'counter-drift'
    | 'rename-completed'
    | 'rename-rolled-back'
    | 'journal-entry-cleared'
    | 'table-collation';
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

/** One reconciliation: what it found, logged as it goes, and repaired when asked. */
export class Run {
  readonly findings: Finding[] = [];

  constructor(
    readonly fix: boolean,
    readonly staleBefore: number,
    private readonly logger: Logger,
    /** DATA_DIR, resolved, and the lost+found folder of this process, where what could be user data goes. */
    readonly dataDir: string,
    private readonly quarantine: string,
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

  /** A finding that is the operator's to act on, with or without `--fix`: `action` says what to do. */
  leftToOperator(kind: Finding['kind'], subject: string, action: string): void {
    this.findings.push({ kind, subject, action: `not repaired: ${action}` });
    if (this.fix) this.logger.warn(`${kind}: ${subject}: not repaired: ${action}`);
  }

  quarantined(file: string): string {
    return path.join(this.quarantine, path.relative(this.dataDir, file));
  }

  async moveToQuarantine(file: string): Promise<string> {
    const target = this.quarantined(file);
    await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    await fs.rename(file, target);
    return target;
  }
}
