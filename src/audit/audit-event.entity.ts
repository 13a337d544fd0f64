import { Entity, Index } from 'typeorm';
import { IdColumn, LongTextColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/** One security-relevant event; rows are only ever added, and deleted by the retention pruning. */
@Entity('audit_event')
@Index('IDX_audit_event_created_unix', ['createdUnix'])
@Index('IDX_audit_event_action', ['action'])
@Index('IDX_audit_event_actor_lower', ['actorLower'])
export class AuditEventEntity {
  @IdColumn()
  id!: number;

  @UnixTimeColumn()
  createdUnix!: number;

  /** The acting user's id; 0 for an anonymous caller, the command line or the server itself. */
  @RefColumn({ default: 0 })
  actorId!: number;

  /** Their login at the time (`cli` for the admin command line, `` when anonymous). */
  @TextColumn(255)
  actorName!: string;

  @TextColumn(255)
  actorLower!: string;

  /** The client address the action came from (behind trusted proxies, the forwarded one). */
  @TextColumn(64)
  address!: string;

  /** `repository.create`, `sign_in`, ... */
  @TextColumn(64)
  action!: string;

  /** `success` or `failure`. */
  @TextColumn(16)
  outcome!: string;

  /** `user`, `organization`, `repository`, `token`, `ssh_key`, ... */
  @TextColumn(32)
  targetType!: string;

  @RefColumn({ default: 0 })
  targetId!: number;

  @TextColumn(255)
  targetName!: string;

  @TextColumn(255)
  targetLower!: string;

  /** A small JSON object of non-secret facts (the carrier, the fields changed). */
  @LongTextColumn()
  detail!: string;
}
