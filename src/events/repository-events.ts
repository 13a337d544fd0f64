import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { RepositoryEntity } from '../repos/repository.entity';
import { LifecycleEvents } from './lifecycle-events';

/** One commit of a push, as git tells it (read before the transaction that records the push). */
export interface PushedCommit {
  id: string;
  message: string;
  authorName: string;
  authorEmail: string;
  committerName: string;
  committerEmail: string;
  /** Committer time, unix seconds. */
  timestamp: number;
  added: string[];
  removed: string[];
  modified: string[];
}

/** One ref a push (or a server-side write) moved: all-zero `before` creates it, all-zero `after` deletes it. */
export interface RefChange {
  ref: string;
  before: string;
  after: string;
  /** Newest first, at most the payload commit limit. */
  commits: PushedCommit[];
  totalCommits: number;
}

/** What happened, in domain terms; the webhooks module turns it into payloads for the hooks that want it. */
export type RepositoryEvent =
  | { kind: 'push'; repo: RepositoryEntity; senderId: number; changes: RefChange[] }
  | { kind: 'repository'; action: 'created' | 'deleted'; repo: RepositoryEntity; senderId: number }
  | { kind: 'release'; action: 'published' | 'updated' | 'deleted'; repo: RepositoryEntity; senderId: number; release: object }
  | { kind: 'package'; action: 'created' | 'deleted'; ownerId: number; senderId: number; package: object }
  | { kind: 'status'; repo: RepositoryEntity; senderId: number; status: StatusFacts }
  | { kind: 'issue'; action: string; repo: RepositoryEntity; senderId: number; issue: { number: number }; changes?: object }
  | {
      kind: 'pull_request';
      action: string;
      repo: RepositoryEntity;
      senderId: number;
      pullRequest: { number: number };
      changes?: object;
      /** The hook event type when not `pull_request` (a review's, a review request's). */
      hookEvent?: string;
      requestedReviewer?: object | null;
      review?: { type: string; content: string } | null;
    }
  | { kind: 'issue_comment'; action: string; repo: RepositoryEntity; senderId: number; issue: object; comment: object; changes?: object };

export interface StatusFacts {
  id: number;
  sha: string;
  state: string;
  context: string;
  description: string;
  targetUrl: string;
  createdUnix: number;
  updatedUnix: number;
}

/** A branch a push (or a server-side write) moved to a commit: all-zero `before` for a new branch. */
export interface BranchMove {
  ref: string;
  before: string;
  after: string;
}

/**
 * The one door through which domain modules report what happened. They call `record` inside the transaction
 * of the change, so that the report is kept exactly when the change is. Who listens (the webhooks outbox; the
 * issue references of pushed commits) is listed in subscribers.ts, as the `activity.*` and `push.*` events.
 */
@Injectable()
export class RepositoryEvents {
  constructor(private readonly bus: LifecycleEvents) {}

  /** Asked inside a transaction, pass it: a second pooled connection held across the transaction can starve the pool. */
  listensTo(repo: RepositoryEntity, tx?: EntityManager): Promise<boolean> {
    return this.bus.any('activity.listened', { repo, tx });
  }

  async record(tx: EntityManager, event: RepositoryEvent): Promise<void> {
    await this.bus.emit('activity.recorded', { tx, event });
  }

  /** Called after the transaction committed: the recorded work may start. */
  committed(): void {
    this.bus.signal('activity.committed', undefined);
  }

  /** Inside the transaction that records a push by a person (not a mirror's fetch): the branches it moved. */
  async recordPush(tx: EntityManager, repo: RepositoryEntity, pusherId: number, moves: BranchMove[]): Promise<void> {
    if (moves.length === 0) return;
    await this.bus.emit('push.recorded', { tx, repo, pusherId, moves });
  }

  /** After the transaction of recordPush committed. */
  pushCommitted(): void {
    this.bus.signal('push.committed', undefined);
  }
}
