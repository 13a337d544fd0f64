import { formatTime } from '../common/time';
import { MilestoneEntity, NO_DEADLINE } from './milestone.entity';
import type { MilestoneWire } from './milestone.wire';

/** Pure: the `Milestone` JSON (the same for every viewer who may read the repository's issues). */
export function toMilestoneWire(milestone: MilestoneEntity): MilestoneWire {
  return {
    id: milestone.id,
    title: milestone.name,
    description: milestone.content,
    state: milestone.isClosed ? 'closed' : 'open',
    open_issues: milestone.numIssues - milestone.numClosedIssues,
    closed_issues: milestone.numClosedIssues,
    created_at: formatTime(milestone.createdUnix),
    updated_at: formatTime(milestone.updatedUnix),
    closed_at: milestone.isClosed ? formatTime(milestone.closedUnix) : null,
    // A due date in year 9999 is none, as Forgejo shows it.
    due_on: milestone.deadlineUnix > 0 && milestone.deadlineUnix < NO_DEADLINE ? formatTime(milestone.deadlineUnix) : null,
  };
}
