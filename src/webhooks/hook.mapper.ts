import { formatTime } from '../common/time';
import type { WebhookDeliveryEntity, WebhookEntity } from './webhook.entities';
import type { HookWire, WebhookDeliveryWire } from './hook.wire';

/** Pure: the `Hook` JSON. The secret and the Authorization header are never part of it. */
export function toHookWire(hook: WebhookEntity): HookWire {
  return {
    id: hook.id,
    type: hook.type,
    branch_filter: hook.branchFilter,
    url: hook.url,
    config: { url: hook.url, content_type: hook.contentType, http_method: hook.httpMethod, ...(hook.isSystem ? { is_system_webhook: 'true' } : {}) },
    events: hook.events === '' ? [] : hook.events.split(','),
    authorization_header: '',
    content_type: hook.contentType,
    metadata: null,
    active: hook.isActive,
    updated_at: formatTime(hook.updatedUnix),
    created_at: formatTime(hook.createdUnix),
  };
}

export function toDeliveryWire(delivery: WebhookDeliveryEntity): WebhookDeliveryWire {
  let headers: Record<string, string> = {};
  try {
    headers = delivery.requestHeaders === '' ? {} : (JSON.parse(delivery.requestHeaders) as Record<string, string>);
  } catch {
    headers = {};
  }
  return {
    uuid: delivery.uuid,
    hook_id: delivery.hookId,
    event: delivery.event,
    status: delivery.status,
    attempts: delivery.attempts,
    request_headers: headers,
    response_status: delivery.responseStatus,
    response_body: delivery.responseBody,
    duration_ms: delivery.durationMs,
    delivered_at: delivery.deliveredMs > 0 ? new Date(delivery.deliveredMs).toISOString() : null,
    next_attempt_at: delivery.done ? null : new Date(delivery.nextAttemptMs).toISOString(),
    created_at: new Date(delivery.createdMs).toISOString(),
  };
}
