import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { Page, PageQuery } from '../common/paging';
import { changeRows } from '../database/transactions';
import { AuditEventEntity } from './audit-event.entity';

export interface AuditFilter {
  /** The actor's login, any case. */
  actor?: string;
  /** An exact action, or a family: `repository.*`. */
  action?: string;
  /** A target's name, any case, optionally with its type: `repository:alice/tools`. */
  target?: { type?: string; name: string };
  /** Unix seconds: events at or after `since`, strictly before `before`. */
  since?: number;
  before?: number;
}

/** The only door to the `audit_event` table: rows are added, listed and pruned, never changed. */
@Injectable()
export class AuditEventStore {
  constructor(private readonly dataSource: DataSource) {}

  async insert(tx: EntityManager, row: Omit<AuditEventEntity, 'id'>): Promise<number> {
    const saved = await tx.getRepository(AuditEventEntity).insert(row);
    return Number(saved.identifiers[0]?.id ?? 0);
  }

  /** Newest first (time, then insertion order within a second). */
  async list(filter: AuditFilter, page: PageQuery): Promise<Page<AuditEventEntity>> {
    const query = this.dataSource.getRepository(AuditEventEntity).createQueryBuilder('event');
    if (filter.actor !== undefined) query.andWhere('event.actorLower = :actor', { actor: filter.actor.toLowerCase() });
    if (filter.action !== undefined) {
      // A family is the range of actions that start with `<subject>.`: '/' is the character after '.'.
      if (filter.action.endsWith('.*')) {
        const subject = filter.action.slice(0, -2);
        query.andWhere('event.action >= :from AND event.action < :to', { from: `${subject}.`, to: `${subject}/` });
      } else query.andWhere('event.action = :action', { action: filter.action });
    }
    if (filter.target !== undefined) {
      query.andWhere('event.targetLower = :target', { target: filter.target.name.toLowerCase() });
      if (filter.target.type !== undefined) query.andWhere('event.targetType = :targetType', { targetType: filter.target.type });
    }
    if (filter.since !== undefined) query.andWhere('event.createdUnix >= :since', { since: filter.since });
    if (filter.before !== undefined) query.andWhere('event.createdUnix < :before', { before: filter.before });
    const [items, total] = await query.orderBy('event.createdUnix', 'DESC').addOrderBy('event.id', 'DESC').skip(page.offset).take(page.limit).getManyAndCount();
    return { items, total };
  }

  /** Deletes events older than `cutoffUnix`; answers how many. */
  prune(tx: EntityManager, cutoffUnix: number): Promise<number> {
    return changeRows(tx, 'DELETE FROM audit_event WHERE created_unix < ?', [cutoffUnix]);
  }
}
