import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { ownProcessTag, recordLapsedProcesses } from '../common/process-identity';
import { IntegrityConfig } from '../config/slices';
import { Leases, LeaseTimeout } from '../database/leases';
import { Reconciliation } from './reconciliation.service';

/** Liveness rows in the `lease` table: `process:<token>`, lapsing at `expires_at` unless renewed. */
const PREFIX = 'process:';
/** One instance at a time clears what lapsed processes left. */
const CLEAR_LEASE = 'process-leftovers';

/**
 * Each server says it is alive in the database: a row under its own tag (the token that begins the names of what
 * it builds on disk, process-identity.ts), renewed every third of RECONCILE_PROCESS_LEASE. A row that lapsed is a
 * process that died, on this machine or another sharing DATA_DIR and the database: every live instance then takes
 * its tag for a dead process's (its leftovers and its leases), and one of them runs the leftovers reconciliation
 * at once, instead of leaving them for RECONCILE_STALE_AFTER. A server that stops cleanly lets its row lapse at
 * once (it leaves nothing, so nothing is cleared in its place).
 */
@Injectable()
export class ProcessLiveness implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Reconciliation');
  private readonly name = `${PREFIX}${ownProcessTag()}`;
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> | null = null;

  constructor(
    private readonly leases: Leases,
    private readonly reconciliation: Reconciliation,
    private readonly integrityConfig: IntegrityConfig,
  ) {}

  /** Writes this process's row (before it builds anything on disk), then renews it and looks for lapsed ones. */
  async start(): Promise<void> {
    await this.renew();
    // Rows that lapsed while no instance ran: the start-up reconciliation that follows clears theirs too.
    recordLapsedProcesses(
      (await this.leases.lapsedUnder(PREFIX, Date.now())).filter((row) => row.name !== this.name).map((row) => row.name.slice(PREFIX.length)),
    );
    this.timer = setInterval(
      () => {
        if (this.beating) return;
        this.beating = this.beat().finally(() => (this.beating = null));
      },
      Math.max(100, Math.floor(this.integrityConfig.processLeaseMs / 3)),
    );
    this.timer.unref();
  }

  /** Before the database closes: the row lapses at once. */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
    await this.beating;
    await this.leases.record(this.name, 0).catch(() => undefined);
  }

  private async beat(): Promise<void> {
    try {
      await this.renew();
      await this.clearLapsed();
    } catch (error) {
      this.logger.warn(`process liveness: ${(error as Error).message}`);
    }
  }

  private renew(): Promise<void> {
    return this.leases.record(this.name, Date.now() + this.integrityConfig.processLeaseMs);
  }

  /** Clears what processes whose rows lapsed left half-made, then forgets their rows; one instance at a time. */
  private async clearLapsed(): Promise<void> {
    const lapsed = (await this.leases.lapsedUnder(PREFIX, Date.now())).filter((row) => row.name !== this.name);
    if (lapsed.length === 0) return;
    // Known dead here from now on, whoever clears: their leases are taken over at once too.
    recordLapsedProcesses(lapsed.map((row) => row.name.slice(PREFIX.length)));
    try {
      await this.leases.run(
        CLEAR_LEASE,
        async () => {
          const report = await this.reconciliation.leftovers({ fix: true });
          for (const row of lapsed) await this.leases.forget(row.name, row.moment);
          this.logger.log(`leftovers of ${lapsed.length} process(es) whose liveness lease lapsed: repaired ${report.findings.length}`);
        },
        { waitMs: 0 },
      );
    } catch (error) {
      if (!(error instanceof LeaseTimeout)) throw error;
    }
  }
}
