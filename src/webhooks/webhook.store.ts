import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { Page, PageQuery } from '../common/paging';
import { changeRows, insertUnlessPresent } from '../database/transactions';
import { WebhookDeliveryEntity, WebhookEntity, WebhookEventEntity } from './webhook.entities';

// One cohesive thing, kept whole though long: the hook and delivery tables, whose claim, retry and fairness
// statements must agree with each other (a delivery is claimed by one worker, in order, per owner and host).

/** Where a hook applies: one repository, an owner's repositories, or every repository. */
export type HookScope = { kind: 'repository'; repoId: number } | { kind: 'owner'; ownerId: number } | { kind: 'system' };

/** A delivery with its event's payload, as a worker sends it. */
export interface QueuedDelivery {
  id: number;
  uuid: string;
  hookId: number;
  event: string;
  attempts: number;
  /** When it may be sent (a retry waits for its backoff or the receiver's Retry-After). */
  nextAttemptMs: number;
  payload: string;
}

/** The oldest unfinished delivery of a hook, when it is due, and who may hold the hook until when. */
export interface QueueHead {
  hookId: number;
  deliveryId: number;
  nextAttemptMs: number;
  leaseExpiresMs: number;
  leaseToken: string;
  /** Whose hook it is (the repository's owner for a repository hook; 0 for a system hook), when looked up. */
  ownerId?: number;
  /** The host it sends to (lower case), when looked up. */
  host?: string;
}

/** What sending a hook's deliveries needs of it (secrets still sealed). */
export type SendingHook = Pick<WebhookEntity, 'id' | 'type' | 'url' | 'httpMethod' | 'contentType' | 'secret' | 'authorizationHeader'>;

/** What choosing the hooks an event goes to needs of them. */
export type ListeningHook = Pick<WebhookEntity, 'id' | 'events' | 'branchFilter'>;

/** The outcome of one attempt, written to the delivery row. */
export interface AttemptOutcome {
  done: boolean;
  status: 'pending' | 'delivered' | 'failed';
  nextAttemptMs: number;
  requestHeaders: string;
  responseStatus: number;
  responseBody: string;
  durationMs: number;
  deliveredMs: number;
}

/** The only door to the webhook tables. */
@Injectable()
export class WebhookStore {
  constructor(private readonly dataSource: DataSource) {}

  private hooks(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(WebhookEntity);
  }

  private scopeCondition(scope: HookScope): Partial<WebhookEntity> {
    if (scope.kind === 'repository') return { repoId: scope.repoId, ownerId: 0, isSystem: false };
    if (scope.kind === 'owner') return { repoId: 0, ownerId: scope.ownerId, isSystem: false };
    return { repoId: 0, ownerId: 0, isSystem: true };
  }

  async list(scope: HookScope, page: PageQuery): Promise<Page<WebhookEntity>> {
    const [items, total] = await this.hooks().findAndCount({ where: this.scopeCondition(scope), order: { id: 'ASC' }, skip: page.offset, take: page.limit });
    return { items, total };
  }

  find(scope: HookScope, id: number): Promise<WebhookEntity | null> {
    return this.hooks().findOneBy({ ...this.scopeCondition(scope), id });
  }

  /** How many hooks the scope has, read in `tx` (after it was ordered behind the scope's other inserts). */
  count(tx: EntityManager, scope: HookScope): Promise<number> {
    return this.hooks(tx).countBy(this.scopeCondition(scope));
  }

  insert(tx: EntityManager, hook: Omit<WebhookEntity, 'id' | 'leaseToken' | 'leaseExpiresMs'>): Promise<WebhookEntity> {
    const repository = this.hooks(tx);
    return repository.save(repository.create({ ...hook, leaseToken: '', leaseExpiresMs: 0 }));
  }

  async update(tx: EntityManager, id: number, changes: Partial<WebhookEntity>): Promise<void> {
    await this.hooks(tx).update({ id }, changes);
  }

  /** The hook, its deliveries and the events no other delivery needs. */
  async delete(tx: EntityManager, id: number): Promise<void> {
    await this.hooks(tx).delete({ id });
    await tx.getRepository(WebhookDeliveryEntity).delete({ hookId: id });
  }

  async deleteOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    const ids = (await this.hooks(tx).find({ select: { id: true }, where: { repoId } })).map((hook) => hook.id);
    for (const id of ids) await this.delete(tx, id);
  }

  /** The hooks of a user or organisation itself (not of its repositories), with their deliveries. */
  async deleteOfOwner(tx: EntityManager, ownerId: number): Promise<void> {
    const ids = (await this.hooks(tx).find({ select: { id: true }, where: { ownerId, repoId: 0 } })).map((hook) => hook.id);
    for (const id of ids) await this.delete(tx, id);
  }

  /**
   * Active hooks that see events of a repository of `ownerId` (repository, owner and system hooks): only what
   * choosing among them needs, read on the push's own path (a hundred hooks are not built as entities).
   */
  async activeFor(tx: EntityManager | undefined, repoId: number, ownerId: number): Promise<ListeningHook[]> {
    const rows = (await (tx ?? this.dataSource.manager).query(
      'SELECT id, events, branch_filter FROM webhook WHERE is_active = ? AND (repo_id = ? OR (owner_id = ? AND repo_id = 0) OR is_system = ?) ORDER BY id',
      [1, repoId, ownerId, 1],
    )) as Record<string, unknown>[];
    return rows.map((row) => ({ id: Number(row.id), events: String(row.events), branchFilter: String(row.branch_filter) }));
  }

  async anyActiveFor(repoId: number, ownerId: number, tx?: EntityManager): Promise<boolean> {
    const row = await this.hooks(tx)
      .createQueryBuilder('h')
      .select('h.id')
      .where('h.is_active = :active', { active: 1 })
      .andWhere('(h.repo_id = :repoId OR (h.owner_id = :ownerId AND h.repo_id = 0) OR h.is_system = :system)', { repoId, ownerId, system: 1 })
      .limit(1)
      .getRawOne();
    return row !== undefined;
  }

  /** Whether any hook exists (without one, nothing is ever delivered). */
  async anyHook(): Promise<boolean> {
    return (await this.hooks().createQueryBuilder('h').select('h.id').limit(1).getRawOne()) !== undefined;
  }

  /** The outbox write: the event and one pending delivery per hook, in the caller's transaction. */
  async enqueue(
    tx: EntityManager,
    event: { event: string; payload: string; createdUnix: number },
    deliveries: { uuid: string; hookId: number }[],
    nowMs: number,
  ): Promise<void> {
    const inserted = await tx.getRepository(WebhookEventEntity).insert(event);
    const eventId = Number(inserted.identifiers[0].id);
    const columns = [
      'uuid',
      'hook_id',
      'event',
      'event_id',
      'next_attempt_ms',
      'created_ms',
      'done',
      'status',
      'attempts',
      'claim_token',
      'claim_expires_ms',
      'request_headers',
      'response_status',
      'response_body',
      'duration_ms',
      'delivered_ms',
    ];
    // What every row of the event shares goes in the statement once; the rest of a new row is the same for all.
    const shared = `${eventId}, ${Number(nowMs)}, ${Number(nowMs)}, 0, 'pending', 0, '', 0, '', 0, '', 0, 0`;
    // Rows go in batches of one statement each: a push to a repository with many hooks costs a few statements.
    for (let start = 0; start < deliveries.length; start += 200) {
      const batch = deliveries.slice(start, start + 200);
      const values = batch.map(() => `(?, ?, ?, ${shared})`).join(', ');
      await changeRows(
        tx,
        `INSERT INTO webhook_delivery (${columns.join(', ')}) VALUES ${values}`,
        batch.flatMap((delivery) => [delivery.uuid, delivery.hookId, event.event]),
      );
    }
  }

  /**
   * The head of every hook's queue: its oldest unfinished delivery, with when it is due and whether another
   * process holds the hook. One index seek per hook (hook_id, done, id): the finished history, however long,
   * is never scanned.
   */
  async queueHeads(): Promise<QueueHead[]> {
    const rows = await this.dataSource.query(
      `SELECT d.hook_id AS hook_id, d.id AS id, d.next_attempt_ms AS next_attempt_ms, h.lease_expires_ms AS lease_expires_ms, h.lease_token AS lease_token,
              COALESCE(r.owner_id, h.owner_id) AS owner_id, h.url AS url
         FROM webhook h
         JOIN webhook_delivery d ON d.id = (SELECT MIN(x.id) FROM webhook_delivery x WHERE x.hook_id = h.id AND x.done = ?)
         LEFT JOIN repository r ON r.id = h.repo_id AND h.repo_id <> 0`,
      [0],
    );
    return (rows as Record<string, number | string>[]).map((row) => ({
      hookId: Number(row.hook_id),
      deliveryId: Number(row.id),
      nextAttemptMs: Number(row.next_attempt_ms),
      leaseExpiresMs: Number(row.lease_expires_ms),
      leaseToken: String(row.lease_token),
      ownerId: Number(row.owner_id),
      host: hostOf(String(row.url)),
    }));
  }

  /** Takes a hook's queue for `token` until `expiresMs`, when no live lease of another process holds it. */
  lease(tx: EntityManager, hookId: number, token: string, nowMs: number, expiresMs: number): Promise<number> {
    return changeRows(tx, 'UPDATE webhook SET lease_token = ?, lease_expires_ms = ? WHERE id = ? AND (lease_expires_ms < ? OR lease_token = ?)', [
      token,
      expiresMs,
      hookId,
      nowMs,
      token,
    ]);
  }

  /**
   * Takes the queues of `hookIds` that no live lease of another process holds, in one conditional update, and
   * answers the hooks taken as a worker sends to them (the rows lock in key order, on every instance alike).
   */
  async leaseMany(tx: EntityManager, hookIds: number[], token: string, nowMs: number, expiresMs: number): Promise<SendingHook[]> {
    if (hookIds.length === 0) return [];
    const list = hookIds.map(() => '?').join(', ');
    await changeRows(tx, `UPDATE webhook SET lease_token = ?, lease_expires_ms = ? WHERE id IN (${list}) AND (lease_expires_ms < ? OR lease_token = ?)`, [
      token,
      expiresMs,
      ...hookIds,
      nowMs,
      token,
    ]);
    const rows = (await tx.query(
      `SELECT id, type, url, http_method, content_type, secret, authorization_header FROM webhook WHERE id IN (${list}) AND lease_token = ? ORDER BY id`,
      [...hookIds, token],
    )) as Record<string, unknown>[];
    return rows.map((row) => ({
      id: Number(row.id),
      type: String(row.type),
      url: String(row.url),
      httpMethod: String(row.http_method),
      contentType: String(row.content_type),
      secret: String(row.secret),
      authorizationHeader: String(row.authorization_header),
    }));
  }

  /** The holders of leases that have not lapsed yet. */
  async leaseHolders(nowMs: number): Promise<string[]> {
    const rows = (await this.dataSource.query("SELECT DISTINCT lease_token AS token FROM webhook WHERE lease_expires_ms >= ? AND lease_token <> ''", [
      nowMs,
    ])) as { token: string }[];
    return rows.map((row) => String(row.token));
  }

  /** Gives back every lease and claim of `tokens` (holders known to be dead); answers the leases given back. */
  async releaseAllOf(tx: EntityManager, tokens: string[]): Promise<number> {
    if (tokens.length === 0) return 0;
    const list = tokens.map(() => '?').join(', ');
    await changeRows(tx, `UPDATE webhook_delivery SET claim_token = '', claim_expires_ms = 0 WHERE claim_token IN (${list}) AND done = ?`, [...tokens, 0]);
    return changeRows(tx, `UPDATE webhook SET lease_token = '', lease_expires_ms = 0 WHERE lease_token IN (${list})`, tokens);
  }

  /** Gives back the leases `token` holds on `hookIds`. */
  releaseLeases(tx: EntityManager, hookIds: number[], token: string): Promise<number> {
    if (hookIds.length === 0) return Promise.resolve(0);
    return changeRows(tx, `UPDATE webhook SET lease_token = '', lease_expires_ms = 0 WHERE id IN (${hookIds.map(() => '?').join(', ')}) AND lease_token = ?`, [
      ...hookIds,
      token,
    ]);
  }

  /**
   * The first `limit` unfinished deliveries of each of `hookIds`, in order, with their payloads: one statement
   * for the deliveries (an index range of `limit` rows per hook, however long its queue) and one for the
   * payloads, each read once however many hooks an event went to.
   */
  async nextOfHooks(tx: EntityManager, hookIds: number[], limit: number): Promise<Map<number, QueuedDelivery[]>> {
    const queues = new Map<number, QueuedDelivery[]>(hookIds.map((hookId) => [hookId, []]));
    const rows: Record<string, unknown>[] = [];
    // SQLite takes at most 500 members in a compound SELECT.
    for (let start = 0; start < hookIds.length; start += 200) {
      const chunk = hookIds.slice(start, start + 200);
      const sql = chunk
        .map(
          (_, index) =>
            `SELECT * FROM (SELECT id, uuid, hook_id, event_id, event, attempts, next_attempt_ms FROM webhook_delivery WHERE hook_id = ? AND done = ? ORDER BY id LIMIT ${Number(limit)}) AS q${index}`,
        )
        .join(' UNION ALL ');
      rows.push(
        ...((await tx.query(
          sql,
          chunk.flatMap((hookId) => [hookId, 0]),
        )) as Record<string, unknown>[]),
      );
    }
    const eventIds = [...new Set(rows.map((row) => Number(row.event_id)))];
    const payloads = new Map<number, string>();
    if (eventIds.length > 0) {
      const events = (await tx.query(`SELECT id, payload FROM webhook_event WHERE id IN (${eventIds.map(() => '?').join(', ')})`, eventIds)) as Record<
        string,
        unknown
      >[];
      for (const event of events) payloads.set(Number(event.id), String(event.payload));
    }
    for (const row of rows) {
      queues.get(Number(row.hook_id))?.push({
        id: Number(row.id),
        uuid: String(row.uuid),
        hookId: Number(row.hook_id),
        event: String(row.event),
        attempts: Number(row.attempts),
        nextAttemptMs: Number(row.next_attempt_ms),
        payload: payloads.get(Number(row.event_id)) ?? '',
      });
    }
    for (const queue of queues.values()) queue.sort((a, b) => a.id - b.id);
    return queues;
  }

  /** Marks deliveries as being sent by `token`, in one conditional update; answers how many it took. */
  claim(tx: EntityManager, ids: number[], token: string, expiresMs: number): Promise<number> {
    if (ids.length === 0) return Promise.resolve(0);
    return changeRows(tx, `UPDATE webhook_delivery SET claim_token = ?, claim_expires_ms = ? WHERE done = ? AND id IN (${ids.map(() => '?').join(', ')})`, [
      token,
      expiresMs,
      0,
      ...ids,
    ]);
  }

  /** Gives back the claims `token` holds on a hook's unfinished deliveries (the rest of a batch not sent). */
  releaseClaims(tx: EntityManager, hookId: number, token: string): Promise<number> {
    return changeRows(tx, "UPDATE webhook_delivery SET claim_token = '', claim_expires_ms = 0 WHERE hook_id = ? AND claim_token = ? AND done = ?", [
      hookId,
      token,
      0,
    ]);
  }

  /** Writes an attempt's outcome, only while `token` still holds the delivery. */
  finish(tx: EntityManager, id: number, token: string, outcome: AttemptOutcome): Promise<number> {
    return changeRows(
      tx,
      `UPDATE webhook_delivery SET done = ?, status = ?, attempts = attempts + 1, next_attempt_ms = ?, claim_token = '', claim_expires_ms = 0,
         request_headers = ?, response_status = ?, response_body = ?, duration_ms = ?, delivered_ms = ? WHERE id = ? AND claim_token = ?`,
      [
        outcome.done ? 1 : 0,
        outcome.status,
        outcome.nextAttemptMs,
        outcome.requestHeaders,
        outcome.responseStatus,
        outcome.responseBody,
        outcome.durationMs,
        outcome.deliveredMs,
        id,
        token,
      ],
    );
  }

  async history(hookId: number, page: PageQuery): Promise<Page<WebhookDeliveryEntity>> {
    const [items, total] = await this.dataSource
      .getRepository(WebhookDeliveryEntity)
      .findAndCount({ where: { hookId }, order: { id: 'DESC' }, skip: page.offset, take: page.limit });
    return { items, total };
  }

  findDelivery(hookId: number, uuid: string): Promise<WebhookDeliveryEntity | null> {
    return this.dataSource.getRepository(WebhookDeliveryEntity).findOneBy({ hookId, uuid });
  }

  /** A new delivery (its own UUID) of an earlier delivery's event, at the end of the hook's queue. */
  async redeliver(tx: EntityManager, original: WebhookDeliveryEntity, uuid: string, nowMs: number): Promise<WebhookDeliveryEntity> {
    const repository = tx.getRepository(WebhookDeliveryEntity);
    return repository.save(
      repository.create({
        uuid,
        hookId: original.hookId,
        eventId: original.eventId,
        event: original.event,
        done: false,
        status: 'pending',
        attempts: 0,
        nextAttemptMs: nowMs,
        claimToken: '',
        claimExpiresMs: 0,
        requestHeaders: '',
        responseStatus: 0,
        responseBody: '',
        durationMs: 0,
        createdMs: nowMs,
        deliveredMs: 0,
      }),
    );
  }

  /** Takes the named job's turn when it is due (one process of several wins); false when not due or taken. */
  async takeTurn(tx: EntityManager, name: string, nowMs: number, nextRunMs: number): Promise<boolean> {
    await changeRows(tx, insertUnlessPresent(tx, 'webhook_lease', ['name', 'next_run_ms']), [name, 0]);
    return (await changeRows(tx, 'UPDATE webhook_lease SET next_run_ms = ? WHERE name = ? AND next_run_ms <= ?', [nextRunMs, name, nowMs])) > 0;
  }

  /** Finished deliveries older than `cutoffMs`, then events no delivery refers to. */
  async prune(tx: EntityManager, cutoffMs: number): Promise<number> {
    const removed = await changeRows(tx, 'DELETE FROM webhook_delivery WHERE done = ? AND delivered_ms < ?', [1, cutoffMs]);
    await changeRows(tx, 'DELETE FROM webhook_event WHERE created_unix < ? AND id NOT IN (SELECT event_id FROM webhook_delivery)', [
      Math.floor(cutoffMs / 1000),
    ]);
    return removed;
  }
}

/** The host of a hook's URL, lower case ('' when it does not parse: such a hook fails at once anyway). */
export function hostOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return '';
  }
}
