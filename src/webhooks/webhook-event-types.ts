/** Hook event types whose `X-*-Event` header names another event, as Forgejo's. */
const HEADER_EVENTS: Record<string, string> = {
  pull_request_assign: 'pull_request',
  pull_request_label: 'pull_request',
  pull_request_milestone: 'pull_request',
  pull_request_sync: 'pull_request',
  pull_request_review_request: 'pull_request',
  pull_request_comment: 'issue_comment',
  pull_request_review_approved: 'pull_request_approved',
  pull_request_review_rejected: 'pull_request_rejected',
  pull_request_review_comment: 'pull_request_comment',
};

/** The review event types a hook choosing `pull_request_review` is sent. */
export const REVIEW_EVENT_TYPES = new Set(['pull_request_review_approved', 'pull_request_review_rejected', 'pull_request_review_comment']);

/** The `X-*-Event` header of an event type: the issue sub-types (assign, label, milestone) are sent as `issues`, as Forgejo. */
export function headerEvent(eventType: string): string {
  if (HEADER_EVENTS[eventType]) return HEADER_EVENTS[eventType];
  return eventType.startsWith('issue_') && eventType !== 'issue_comment' ? 'issues' : eventType;
}
