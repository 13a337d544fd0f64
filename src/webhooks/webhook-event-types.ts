/** The `X-*-Event` header of an event type: the issue sub-types (assign, label, milestone) are sent as `issues`, as Forgejo. */
export function headerEvent(eventType: string): string {
  return eventType.startsWith('issue_') && eventType !== 'issue_comment' ? 'issues' : eventType;
}
