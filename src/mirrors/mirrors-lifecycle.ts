import { Injectable } from '@nestjs/common';
import { Clock } from '../common/time';
import type { MirrorIntervalChange, MirrorIntervalEdited, RepositoryDeleted } from '../events/lifecycle-events';
import { parseMirrorInterval } from './mirror-interval';
import { MirrorStore } from './mirror.store';

/** What mirrors do on lifecycle events (src/events/subscribers.ts). */
@Injectable()
export class MirrorsLifecycle {
  constructor(
    private readonly mirrors: MirrorStore,
    private readonly clock: Clock,
  ) {}

  /**
   * A mirror's new interval (an empty one is the default, 8h), checked before anything is written (422), and the
   * write of the mirror record: as Forgejo's ScheduleNextUpdate, due after the new interval from now, never when 0.
   */
  intervalEdited({ repo, value }: MirrorIntervalEdited): MirrorIntervalChange {
    const interval = parseMirrorInterval(value === '' ? '8h' : value);
    return {
      display: interval.display,
      apply: (tx) => this.mirrors.setInterval(tx, repo.id, interval.seconds, interval.seconds > 0 ? this.clock.nowUnix() + interval.seconds : 0),
    };
  }

  async repositoryDeleted({ tx, repo }: RepositoryDeleted): Promise<void> {
    await this.mirrors.deleteOfRepository(tx, repo.id);
  }
}
