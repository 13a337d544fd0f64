import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Logger as PinoLogger } from 'pino';
import type { EntityManager } from 'typeorm';
import { AuditConfig } from '../config/slices';
import { InvalidInputError } from '../common/errors';
import type { Page, PageQuery } from '../common/paging';
import { Clock, formatTime } from '../common/time';
import { Leases } from '../database/leases';
import { Transactions } from '../database/transactions';
import { APP_LOG } from '../logging/logging.module';
import { AuditActor, currentActor } from './audit-context';
import { AuditEventEntity } from './audit-event.entity';
import { AUDIT_ACTIONS, AuditDetail, AuditEvent } from './audit-event';
import { AuditEventStore, AuditFilter } from './audit-event.store';

/** The carriers a sign-in can come by. */
export type SignInCarrier = 'basic' | 'token' | 'reverse-proxy' | 'session' | 'ssh';

/** A detail key that could hold a secret is never written, whatever a caller passes. */
const SECRET_KEY = /pass|secret|token|private|credential|authori[sz]ation|cookie|otp/i;
const LONGEST_DETAIL_TEXT = 200;
/** A repeated successful sign-in (same user, carrier and address) is recorded once per this long, per process. */
const SIGN_IN_REPEAT_MS = 10 * 60_000;
const SIGN_IN_MEMORY = 10_000;
const PRUNE_CHECK_MS = 10 * 60_000;
const PRUNE_EVERY_MS = 3_600_000;
const PRUNE_LEASE = 'audit:prune';

/**
 * The audit log: `record` writes one event with the transaction of the change it tells of (no change without
 * its event, no event of a change rolled back), and once that commits, the same event as one JSON log line for
 * a SIEM. Events that change nothing (sign-ins) are written in a transaction of their own.
 */
@Injectable()
export class AuditService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Audit');
  private readonly recentSignIns = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: AuditEventStore,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly leases: Leases,
    @Inject(APP_LOG) private readonly log: PinoLogger,
    private readonly auditConfig: AuditConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(
      () => void this.pruneExpired().catch((error: Error) => this.logger.warn(`audit pruning failed: ${error.message}`)),
      PRUNE_CHECK_MS,
    );
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Records `event` in `tx`, the transaction of the change itself. */
  async record(tx: EntityManager, event: AuditEvent): Promise<void> {
    const actor: AuditActor | undefined = event.actor ?? currentActor();
    const row: Omit<AuditEventEntity, 'id'> = {
      createdUnix: this.clock.nowUnix(),
      actorId: actor?.id ?? 0,
      actorName: actor?.name ?? '',
      actorLower: (actor?.name ?? '').toLowerCase(),
      address: actor?.address ?? '',
      action: event.action,
      outcome: event.outcome ?? 'success',
      targetType: event.target.type,
      targetId: event.target.id ?? 0,
      targetName: event.target.name.slice(0, 255),
      targetLower: event.target.name.slice(0, 255).toLowerCase(),
      detail: JSON.stringify(this.safeDetail({ ...(event.detail ?? {}), ...(actor?.sudoBy ? { sudo_by: actor.sudoBy } : {}) })),
    };
    const id = await this.store.insert(tx, row);
    Transactions.afterCommit(() => this.log.info({ audit: auditLine({ ...row, id }) }, 'audit event'));
  }

  /** An event that changes nothing else, in a transaction of its own. */
  recordAlone(event: AuditEvent): Promise<void> {
    return this.transactions.run((tx) => this.record(tx, event));
  }

  /**
   * A sign-in's outcome. A failure is always recorded (failures are rate limited); a success once per user,
   * carrier and address every ten minutes, or every API call would be a write. Never fails the request: a
   * database that refuses the event is logged.
   */
  async signIn(
    outcome: 'success' | 'failure',
    carrier: SignInCarrier,
    address: string,
    who: { id: number; name: string } | null,
    attempted = '',
  ): Promise<void> {
    if (outcome === 'success' && who) {
      const key = `${who.id}|${carrier}|${address}`;
      const now = Date.now();
      const last = this.recentSignIns.get(key);
      if (last !== undefined && now - last < SIGN_IN_REPEAT_MS) return;
      if (this.recentSignIns.size >= SIGN_IN_MEMORY) this.recentSignIns.clear();
      this.recentSignIns.set(key, now);
    }
    const actor = who ? { id: who.id, name: who.name, address } : { id: 0, name: '', address };
    const target = who ? { type: 'user' as const, id: who.id, name: who.name } : { type: 'user' as const, name: attempted };
    await this.recordAlone({ action: 'sign_in', outcome, actor, target, detail: { carrier } }).catch((error: Error) => {
      this.logger.error(`audit event sign_in not recorded: ${error.message}`);
    });
  }

  list(filter: AuditFilter, page: PageQuery): Promise<Page<AuditEventEntity>> {
    return this.store.list(filter, page);
  }

  /**
   * Deletes events older than AUDIT_RETENTION_DAYS, at most once an hour over every instance: the one that takes
   * the hour's lease (never given back, it lapses after the hour) does it. Answers what it deleted, or null
   * when another instance had the turn.
   */
  async pruneExpired(nowMs = Date.now()): Promise<number | null> {
    if (!(await this.leases.tryAcquire(PRUNE_LEASE, PRUNE_EVERY_MS))) return null;
    const cutoff = Math.floor(nowMs / 1000) - this.auditConfig.retentionDays * 86_400;
    const removed = await this.transactions.run((tx) => this.store.prune(tx, cutoff));
    if (removed > 0) this.logger.log(`pruned ${removed} audit events older than ${this.auditConfig.retentionDays} days`);
    return removed;
  }

  private safeDetail(detail: AuditDetail): AuditDetail {
    const safe: AuditDetail = {};
    for (const [key, value] of Object.entries(detail)) {
      if (SECRET_KEY.test(key)) {
        this.logger.error(`audit detail "${key}" dropped: its name says it may hold a secret`);
        continue;
      }
      safe[key] =
        typeof value === 'string'
          ? value.slice(0, LONGEST_DETAIL_TEXT)
          : Array.isArray(value)
            ? value.map((item) => item.slice(0, LONGEST_DETAIL_TEXT))
            : value;
    }
    return safe;
  }
}

/** The log line's `audit` object: the row as the API shows it. */
export function auditLine(row: AuditEventEntity) {
  return {
    id: row.id,
    time: formatTime(row.createdUnix),
    action: row.action,
    outcome: row.outcome,
    actor: { id: row.actorId, name: row.actorName },
    address: row.address,
    target: { type: row.targetType, id: row.targetId, name: row.targetName },
    detail: JSON.parse(row.detail || '{}') as AuditDetail,
  };
}

/** The query of GET /admin/audit, checked: a bad date or action is a 422 naming it. */
export function auditFilter(query: Record<string, unknown>): AuditFilter {
  const text = (name: string): string | undefined => {
    const value = query[name];
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string') throw new InvalidInputError(`invalid ${name}`);
    return value;
  };
  const time = (name: string): number | undefined => {
    const value = text(name);
    if (value === undefined) return undefined;
    const parsed = Date.parse(value);
    if (Number.isNaN(parsed)) throw new InvalidInputError(`invalid ${name}: ${value} (use RFC 3339, e.g. 2026-01-31T00:00:00Z)`);
    return Math.floor(parsed / 1000);
  };
  const action = text('action');
  if (action !== undefined && !(AUDIT_ACTIONS as readonly string[]).includes(action) && !/^[a-z0-9_]+\.\*$/.test(action)) {
    throw new InvalidInputError(`invalid action: ${action}`);
  }
  const target = text('target');
  const colon = target?.indexOf(':') ?? -1;
  return {
    actor: text('actor'),
    action,
    target: target === undefined ? undefined : colon > 0 ? { type: target.slice(0, colon), name: target.slice(colon + 1) } : { name: target },
    since: time('since'),
    before: time('before'),
  };
}
