import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Clock } from '../common/time';
import { MirrorConfig } from '../config/slices';
import { QUOTA_GATE, QuotaGate } from '../quota/quota-gate';
import { MirrorRunner } from './mirror-runner';
import { MirrorStore } from './mirror.store';

/** Mirrors picked per tick (docs/mirrors.md). */
export const MIRRORS_PER_TICK = 50;

/**
 * The periodic sync (docs/mirrors.md): every tick (60 s; none at start-up), the due mirrors, oldest
 * `mirror_updated` first, 50 at most, are queued; an owner over quota for `size:repos:all` is skipped and stays
 * due. The timer is the only thing tied to wall time: `tick()` is public so that tests drive the schedule with
 * the injected Clock instead of waiting.
 */
@Injectable()
export class MirrorScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('MirrorScheduler');
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<number> | null = null;

  constructor(
    private readonly mirrorConfig: MirrorConfig,
    @Inject(QUOTA_GATE) private readonly quota: QuotaGate,
    private readonly mirrors: MirrorStore,
    private readonly runner: MirrorRunner,
    private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    if (this.mirrorConfig.tickMs <= 0) return;
    this.timer = setInterval(() => {
      this.tick().catch((error: Error) => this.logger.error(`mirror schedule tick failed: ${error.message}`));
    }, this.mirrorConfig.tickMs);
    this.timer.unref();
  }

  beforeApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One tick; answers how many mirrors it queued. A tick that overlaps a running one joins it. */
  tick(): Promise<number> {
    this.ticking ??= this.queueDue().finally(() => {
      this.ticking = null;
    });
    return this.ticking;
  }

  private async queueDue(): Promise<number> {
    const due = await this.mirrors.findDue(this.clock.nowUnix(), MIRRORS_PER_TICK, this.runner.knownIds());
    let queued = 0;
    for (const mirror of due) {
      if (!(await this.quota.canWrite(mirror.ownerId, 'size:repos:all'))) continue;
      this.runner.request(mirror.repoId);
      queued += 1;
    }
    return queued;
  }
}
