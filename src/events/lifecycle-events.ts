import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { AuthContext } from '../auth/auth-context';
import type { PushAllowance, PushContext, RefUpdate } from '../git/push-hooks';
import type { RepositoryEntity } from '../repos/repository.entity';
import type { TeamEntity } from '../users/organization.entities';
import type { UserEntity } from '../users/user.entity';
import type { BranchMove, RepositoryEvent } from './repository-events';

/** A user or an organisation is being deleted: inside the deleting transaction, before its row goes. */
export interface UserDeleted {
  tx: EntityManager;
  user: UserEntity;
}

/** A team of an organisation is being deleted: inside the deleting transaction, before its row goes. */
export interface TeamDeleted {
  tx: EntityManager;
  team: TeamEntity;
}

/** A repository's row has gone, inside the deleting transaction; `doerId` deletes it. */
export interface RepositoryDeleted {
  tx: EntityManager;
  repo: RepositoryEntity;
  doerId: number;
}

/** Work a deletion leaves for after its commit (files on disk): run in order, each failure logged. */
export type AfterCommit = () => Promise<void>;

/** A repository's row was written, inside the creating transaction. */
export interface RepositoryCreated {
  tx: EntityManager;
  repo: RepositoryEntity;
  owner: UserEntity;
  creator: AuthContext;
}

/** A user's key is about to hold this material: does another kind of key hold it? (`locking` as the stores'). */
export interface KeyMaterialClaimed {
  fingerprint: string;
  tx: EntityManager;
  locking?: boolean;
}

/**
 * A mirror's interval is edited (PATCH /repos/{owner}/{repo}): the handler checks the value (422) before anything
 * is written and answers the stored form and the write of the mirror record.
 */
export interface MirrorIntervalEdited {
  repo: RepositoryEntity;
  value: string;
}
export interface MirrorIntervalChange {
  display: string;
  apply(tx: EntityManager): Promise<void>;
}

/** The hooks of one receive-pack (docs/git-transports.md). */
export interface PushReceived {
  push: PushContext;
  updates: RefUpdate[];
  /** git's quarantine variables (pre-receive only). */
  objects: Record<string, string>;
}

/** Refs a push or a server write moved, recorded and committed: before the push is answered. */
export interface RefsChanged {
  repositoryId: number;
  updates: RefUpdate[];
  senderId: number;
}

/** Inside the transaction that records a push by a person (not a mirror's fetch): the branches it moved. */
export interface PushRecorded {
  tx: EntityManager;
  repo: RepositoryEntity;
  pusherId: number;
  moves: BranchMove[];
}

/** Something a repository's webhooks may report happened, inside the transaction of the change. */
export interface ActivityRecorded {
  tx: EntityManager;
  event: RepositoryEvent;
}

/** Whether anything listens to this repository's activity (passing the caller's transaction, when in one). */
export interface ActivityListened {
  repo: RepositoryEntity;
  tx?: EntityManager;
}

/**
 * Every lifecycle event: what its handlers receive and what each answers. The subscribers of each, in their
 * order, are listed in subscribers.ts and nowhere else.
 */
export interface LifecycleEventMap {
  'user.deleted': { payload: UserDeleted; answer: void };
  'team.deleted': { payload: TeamDeleted; answer: void };
  'repository.deleted': { payload: RepositoryDeleted; answer: AfterCommit | void };
  'repository.created': { payload: RepositoryCreated; answer: void };
  'key-material.claimed': { payload: KeyMaterialClaimed; answer: boolean };
  'mirror.interval-edited': { payload: MirrorIntervalEdited; answer: MirrorIntervalChange };
  'push.starting': { payload: PushContext; answer: PushAllowance | null };
  'push.pre-receive': { payload: PushReceived; answer: void };
  'push.post-receive': { payload: PushReceived; answer: void };
  'push.recorded': { payload: PushRecorded; answer: void };
  'push.committed': { payload: void; answer: void };
  'refs.changed': { payload: RefsChanged; answer: void };
  'activity.recorded': { payload: ActivityRecorded; answer: void };
  'activity.committed': { payload: void; answer: void };
  'activity.listened': { payload: ActivityListened; answer: boolean };
}

export type LifecycleEventName = keyof LifecycleEventMap;
export type EventPayload<N extends LifecycleEventName> = LifecycleEventMap[N]['payload'];
export type EventAnswer<N extends LifecycleEventName> = LifecycleEventMap[N]['answer'];
export type EventHandler<N extends LifecycleEventName> = (payload: EventPayload<N>) => EventAnswer<N> | Promise<EventAnswer<N>>;
/** Events whose handlers answer nothing, which may run at once (signals after a commit). */
type SignalName = { [N in LifecycleEventName]: EventAnswer<N> extends void ? N : never }[LifecycleEventName];
/** Events whose handlers answer yes or no. */
type QuestionName = { [N in LifecycleEventName]: EventAnswer<N> extends boolean ? N : never }[LifecycleEventName];

/**
 * The one bus of lifecycle events. `emit` awaits each handler in the order they subscribed and stops at the first
 * that throws, whose error it throws: a handler given the caller's transaction (`tx`) therefore fails the
 * caller's transaction. `signal` calls them at once, synchronously, for what runs after a commit.
 */
@Injectable()
export class LifecycleEvents {
  private readonly handlers = new Map<LifecycleEventName, unknown[]>();

  subscribe<N extends LifecycleEventName>(name: N, handler: EventHandler<N>): void {
    const list = this.handlers.get(name) ?? [];
    list.push(handler);
    this.handlers.set(name, list);
  }

  /** Whether anything subscribed to `name` (a push is refused while nothing handles its hooks). */
  heard(name: LifecycleEventName): boolean {
    return (this.handlers.get(name)?.length ?? 0) > 0;
  }

  /** Each handler's answer, in order. */
  async emit<N extends LifecycleEventName>(name: N, payload: EventPayload<N>): Promise<EventAnswer<N>[]> {
    const answers: EventAnswer<N>[] = [];
    for (const handler of this.list(name)) answers.push(await handler(payload));
    return answers;
  }

  /** As `emit`, but each handler's failure goes to `failed` and the next handler still runs. */
  async settle<N extends LifecycleEventName>(name: N, payload: EventPayload<N>, failed: (error: unknown) => void): Promise<void> {
    for (const handler of this.list(name)) {
      try {
        await handler(payload);
      } catch (error) {
        failed(error);
      }
    }
  }

  /** Whether a handler answers true; the later ones are not asked. */
  async any<N extends QuestionName>(name: N, payload: EventPayload<N>): Promise<boolean> {
    for (const handler of this.list(name)) if ((await handler(payload)) === true) return true;
    return false;
  }

  signal<N extends SignalName>(name: N, payload: EventPayload<N>): void {
    for (const handler of this.list(name)) void handler(payload);
  }

  private list<N extends LifecycleEventName>(name: N): EventHandler<N>[] {
    return (this.handlers.get(name) ?? []) as EventHandler<N>[];
  }
}
