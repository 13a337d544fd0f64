import { formatTime } from '../common/time';
import type { AuditEventEntity } from './audit-event.entity';
import type { AuditEventWire } from './audit-event.wire';

export function toAuditEventWire(row: AuditEventEntity): AuditEventWire {
  return {
    id: row.id,
    action: row.action,
    outcome: row.outcome,
    actor: { id: row.actorId, login: row.actorName },
    address: row.address,
    target: { type: row.targetType, id: row.targetId, name: row.targetName },
    detail: JSON.parse(row.detail || '{}') as Record<string, unknown>,
    created: formatTime(row.createdUnix),
  };
}
