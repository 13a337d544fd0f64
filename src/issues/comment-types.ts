/**
 * The kinds of timeline entries, with Forgejo's numbers (stored in `comment.type`) and names (a timeline entry's
 * `type`). Anvil writes some of them; the others are named so that rows a migration brings read as Forgejo's.
 */
export enum CommentType {
  /** A plain comment: the only kind the comment routes list and `issue.num_comments` counts. */
  Comment = 0,
  Reopen = 1,
  Close = 2,
  IssueRef = 3,
  /** A commit that names the issue (its body links the commit, `commit_sha` is its id). */
  CommitRef = 4,
  CommentRef = 5,
  PullRef = 6,
  /** A label put on (body `1`) or taken off (body empty). */
  Label = 7,
  Milestone = 8,
  /** A user assigned, or unassigned (`removed_assignee`). */
  Assignees = 9,
  ChangeTitle = 10,
  DeleteBranch = 11,
  StartTracking = 12,
  StopTracking = 13,
  AddTimeManual = 14,
  CancelTracking = 15,
  /** Due dates, the body `YYYY-MM-DD` (modified: `new|old`). */
  AddedDeadline = 16,
  ModifiedDeadline = 17,
  RemovedDeadline = 18,
  AddDependency = 19,
  RemoveDependency = 20,
  Code = 21,
  Review = 22,
  Lock = 23,
  Unlock = 24,
  ChangeTargetBranch = 25,
  DeleteTimeManual = 26,
  ReviewRequest = 27,
  MergePull = 28,
  PullPush = 29,
  Project = 30,
  ProjectBoard = 31,
  DismissReview = 32,
  ChangeIssueRef = 33,
  PullScheduledMerge = 34,
  PullCancelScheduledMerge = 35,
  Pin = 36,
  Unpin = 37,
}

const NAMES = [
  'comment',
  'reopen',
  'close',
  'issue_ref',
  'commit_ref',
  'comment_ref',
  'pull_ref',
  'label',
  'milestone',
  'assignees',
  'change_title',
  'delete_branch',
  'start_tracking',
  'stop_tracking',
  'add_time_manual',
  'cancel_tracking',
  'added_deadline',
  'modified_deadline',
  'removed_deadline',
  'add_dependency',
  'remove_dependency',
  'code',
  'review',
  'lock',
  'unlock',
  'change_target_branch',
  'delete_time_manual',
  'review_request',
  'merge_pull',
  'pull_push',
  'project',
  'project_board',
  'dismiss_review',
  'change_issue_ref',
  'pull_scheduled_merge',
  'pull_cancel_scheduled_merge',
  'pin',
  'unpin',
];

/** Forgejo's name of a comment type; `comment` for a number it does not know. */
export function commentTypeName(type: number): string {
  return NAMES[type] ?? 'comment';
}
