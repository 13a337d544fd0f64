import { AuthContext } from '../auth/auth-context';
import { formatTime } from '../common/time';
import type { PushedCommit, RefChange, RepositoryEvent } from '../events/repository-events';
import { repositoryUrls, toRepositoryWire } from '../repos/repository.mapper';
import type { RepositoryEntity } from '../repos/repository.entity';
import type { Site } from '../common/site-urls';
import { toUserWire } from '../users/user.mapper';
import { UserEntity, UserType } from '../users/user.entity';

const ALL_PERMISSIONS = { admin: true, push: true, pull: true };
const BRANCHES = 'refs/heads/';
const TAGS = 'refs/tags/';

/** One payload to send: the event header, and the branch it concerns (for `branch_filter`), if any. */
export interface OutgoingPayload {
  event: string;
  branch: string | null;
  body: Record<string, unknown>;
}

/** The rows a payload is built from, read in the event's transaction. */
export interface PayloadFacts {
  repo: RepositoryEntity | null;
  owner: UserEntity;
  sender: UserEntity | null;
  site: Site;
  /** The user names of known commit addresses, by lower-cased address (`username` of authors and committers). */
  usernames?: Map<string, string>;
}

/** Issue actions Forgejo sends as an event type of their own (a hook choosing `issues` gets them too). */
const ISSUE_EVENT_TYPES: Record<string, string> = {
  assigned: 'issue_assign',
  unassigned: 'issue_assign',
  label_updated: 'issue_label',
  label_cleared: 'issue_label',
  milestoned: 'issue_milestone',
  demilestoned: 'issue_milestone',
};

/**
 * Pure: the payloads of one event, in Forgejo's JSON. Users are shown as to an anonymous viewer (no private
 * e-mail), the repository as to its owner. A push yields per ref `create` (new ref) then `push`, or `delete`.
 */
export function payloadsOf(event: RepositoryEvent, facts: PayloadFacts, commitLimit: number): OutgoingPayload[] {
  const viewer = AuthContext.anonymous();
  const sender = facts.sender ? toUserWire(facts.sender, viewer, facts.site) : null;
  const repository = facts.repo ? toRepositoryWire(facts.repo, facts.owner, viewer, ALL_PERMISSIONS, facts.site) : null;
  const organization = facts.owner.type === UserType.Organization ? toUserWire(facts.owner, viewer, facts.site) : null;
  switch (event.kind) {
    case 'push': {
      const html = repositoryUrls(facts.owner, event.repo, facts.site).html;
      const payloads: OutgoingPayload[] = [];
      const names = facts.usernames ?? new Map<string, string>();
      for (const change of event.changes) payloads.push(...refPayloads(change, html, repository, sender, commitLimit, names));
      return payloads;
    }
    case 'repository':
      return [{ event: 'repository', branch: null, body: { action: event.action, repository, organization, sender } }];
    case 'release':
      return [{ event: 'release', branch: null, body: { action: event.action, release: event.release, repository, sender } }];
    case 'issue':
      return [
        {
          event: ISSUE_EVENT_TYPES[event.action] ?? 'issues',
          branch: null,
          body: {
            action: event.action,
            number: event.issue.number,
            ...(event.changes ? { changes: event.changes } : {}),
            issue: event.issue,
            repository,
            sender,
            commit_id: '',
          },
        },
      ];
    case 'pull_request':
      return [
        {
          event: event.hookEvent ?? 'pull_request',
          branch: null,
          body: {
            action: event.action,
            number: event.pullRequest.number,
            ...(event.changes ? { changes: event.changes } : {}),
            pull_request: event.pullRequest,
            requested_reviewer: event.requestedReviewer ?? null,
            repository,
            sender,
            commit_id: '',
            review: event.review ?? null,
          },
        },
      ];
    case 'issue_comment':
      return [
        {
          event: 'issue_comment',
          branch: null,
          body: {
            action: event.action,
            issue: event.issue,
            comment: event.comment,
            ...(event.changes ? { changes: event.changes } : {}),
            repository,
            sender,
            is_pull: false,
          },
        },
      ];
    case 'package':
      return [{ event: 'package', branch: null, body: { action: event.action, repository: null, package: event.package, organization, sender } }];
    case 'status': {
      const html = repositoryUrls(facts.owner, event.repo, facts.site).html;
      const status = event.status;
      return [
        {
          event: 'status',
          branch: null,
          body: {
            commit: { id: status.sha, url: `${html}/commit/${status.sha}` },
            context: status.context,
            created_at: formatTime(status.createdUnix),
            description: status.description,
            id: status.id,
            repository,
            sender,
            sha: status.sha,
            state: status.state,
            target_url: status.targetUrl,
            updated_at: formatTime(status.updatedUnix),
          },
        },
      ];
    }
  }
}

function refPayloads(
  change: RefChange,
  html: string,
  repository: unknown,
  sender: unknown,
  commitLimit: number,
  names: Map<string, string>,
): OutgoingPayload[] {
  const isBranch = change.ref.startsWith(BRANCHES);
  const refType = isBranch ? 'branch' : 'tag';
  const shortName = isBranch ? change.ref.slice(BRANCHES.length) : change.ref.startsWith(TAGS) ? change.ref.slice(TAGS.length) : change.ref;
  const branch = isBranch ? shortName : null;
  if (/^0+$/.test(change.after)) {
    return [{ event: 'delete', branch, body: { ref: shortName, ref_type: refType, pusher_type: 'user', repository, sender } }];
  }
  const payloads: OutgoingPayload[] = [];
  if (/^0+$/.test(change.before)) {
    payloads.push({ event: 'create', branch, body: { sha: change.after, ref: change.ref, ref_type: refType, repository, sender } });
  }
  payloads.push({ event: 'push', branch, body: pushBody(change, html, repository, sender, commitLimit, names) });
  return payloads;
}

/** The push payload: ref, before/after, compare URL, the newest commits (at most the limit) and the head. */
export function pushBody(
  change: RefChange,
  html: string,
  repository: unknown,
  sender: unknown,
  commitLimit: number,
  names = new Map<string, string>(),
): Record<string, unknown> {
  const commits = change.commits.slice(0, commitLimit).map((commit) => payloadCommit(commit, html, names));
  const created = /^0+$/.test(change.before);
  return {
    ref: change.ref,
    before: change.before,
    after: change.after,
    compare_url: !created && commits.length > 0 ? `${html}/compare/${change.before}...${change.after}` : '',
    commits,
    total_commits: Math.max(change.totalCommits, commits.length),
    head_commit: commits[0] ?? null,
    repository,
    pusher: sender,
    sender,
  };
}

function payloadCommit(commit: PushedCommit, html: string, names: Map<string, string>): Record<string, unknown> {
  const username = (email: string) => names.get(email.toLowerCase()) ?? '';
  return {
    id: commit.id,
    message: commit.message,
    url: `${html}/commit/${commit.id}`,
    author: { name: commit.authorName, email: commit.authorEmail, username: username(commit.authorEmail) },
    committer: { name: commit.committerName, email: commit.committerEmail, username: username(commit.committerEmail) },
    verification: null,
    timestamp: formatTime(commit.timestamp),
    added: commit.added,
    removed: commit.removed,
    modified: commit.modified,
  };
}

/**
 * The `gitea` format names the ref of `create` and `delete` by its short name (Woodpecker reads it so); the
 * other formats send the payload as recorded.
 */
export function bodyForType(type: string, event: string, payload: string): string {
  if (type !== 'gitea' || (event !== 'create' && event !== 'delete')) return payload;
  const body = JSON.parse(payload) as { ref?: string };
  if (typeof body.ref === 'string') body.ref = body.ref.replace(/^refs\/(heads|tags)\//, '');
  return JSON.stringify(body);
}
