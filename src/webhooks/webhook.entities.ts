import { Entity, Index } from 'typeorm';
import { CounterColumn, FlagColumn, IdColumn, LongTextColumn, MediumTextColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/**
 * A webhook. Exactly one scope: a repository (`repo_id`), an owner's repositories (`owner_id`, a user or an
 * organisation), or every repository (`is_system`).
 */
@Entity('webhook')
@Index('IDX_webhook_repo_id', ['repoId'])
@Index('IDX_webhook_owner_id', ['ownerId'])
export class WebhookEntity {
  @IdColumn()
  id: number;

  @RefColumn({ default: 0 })
  repoId: number;

  @RefColumn({ default: 0 })
  ownerId: number;

  @FlagColumn(false)
  isSystem: boolean;

  /** forgejo | gitea | gogs */
  @TextColumn(16)
  type: string;

  @LongTextColumn()
  url: string;

  /** POST, or GET (forgejo and gitea formats: the payload in the query string). */
  @TextColumn(8)
  httpMethod: string;

  /** json | form */
  @TextColumn(8)
  contentType: string;

  /** The signing secret sealed with SECRET_KEY, '' when there is none. Never leaves the server. */
  @LongTextColumn()
  secret: string;

  /** The Authorization header value sealed with SECRET_KEY, '' when there is none. Never leaves the server. */
  @LongTextColumn()
  authorizationHeader: string;

  /** Comma-separated event names the hook is sent. */
  @TextColumn(512)
  events: string;

  @TextColumn(255)
  branchFilter: string;

  @FlagColumn(false)
  isActive: boolean;

  /** The process delivering this hook's queue now ('' when none): one at a time keeps the queue's order. */
  @TextColumn(64)
  leaseToken: string;

  /** The lease is void after this time (its process died). */
  @UnixTimeColumn()
  leaseExpiresMs: number;

  @UnixTimeColumn()
  createdUnix: number;

  @UnixTimeColumn()
  updatedUnix: number;
}

/** One event as it happened, with the JSON every hook that wants it is sent (written with the change). */
@Entity('webhook_event')
@Index('IDX_webhook_event_created_unix', ['createdUnix'])
export class WebhookEventEntity {
  @IdColumn()
  id: number;

  /** The header name of the event: push, create, delete, repository, release, package, status. */
  @TextColumn(32)
  event: string;

  @MediumTextColumn()
  payload: string;

  @UnixTimeColumn()
  createdUnix: number;
}

/**
 * The outbox: one row per (event, hook). Per hook, rows leave in id order; a row is taken by one process at a
 * time through `claim_token` (a conditional update), and a claim whose process died lapses at `claim_expires_ms`.
 */
@Entity('webhook_delivery')
@Index('IDX_webhook_delivery_uuid', ['uuid'], { unique: true })
@Index('IDX_webhook_delivery_hook_id_done_id', ['hookId', 'done', 'id'])
@Index('IDX_webhook_delivery_done_next_attempt_ms', ['done', 'nextAttemptMs'])
export class WebhookDeliveryEntity {
  @IdColumn()
  id: number;

  /** Stable across retries and redeliveries of this row: receivers use it to drop duplicates. */
  @TextColumn(36)
  uuid: string;

  @RefColumn()
  hookId: number;

  @RefColumn()
  eventId: number;

  /** Copied from the event, for the history lists. */
  @TextColumn(32)
  event: string;

  /** True once delivered or given up; false while it waits or is in flight. */
  @FlagColumn(false)
  done: boolean;

  /** pending | delivered | failed */
  @TextColumn(16)
  status: string;

  @CounterColumn()
  attempts: number;

  @UnixTimeColumn()
  nextAttemptMs: number;

  @TextColumn(64)
  claimToken: string;

  @UnixTimeColumn()
  claimExpiresMs: number;

  /** JSON object of the last attempt's request headers, signatures and Authorization left out. */
  @LongTextColumn()
  requestHeaders: string;

  /** 0 when the last attempt got no answer (refused, timed out, refused by the host policy). */
  @CounterColumn()
  responseStatus: number;

  /** The answer's first 64 KiB, or what went wrong. */
  @LongTextColumn()
  responseBody: string;

  @CounterColumn()
  durationMs: number;

  @UnixTimeColumn()
  createdMs: number;

  /** When the last attempt ended; 0 before the first. */
  @UnixTimeColumn()
  deliveredMs: number;
}

/** Jobs that one of several instances runs now and then (history pruning): the row is the lease. */
@Entity('webhook_lease')
@Index('IDX_webhook_lease_name', ['name'], { unique: true })
export class WebhookLeaseEntity {
  @IdColumn()
  id: number;

  @TextColumn(32)
  name: string;

  @UnixTimeColumn()
  nextRunMs: number;
}
