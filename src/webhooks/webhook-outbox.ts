import { Injectable } from '@nestjs/common';
import { v7 as timeOrderedUuid } from 'uuid';
import type { EntityManager } from 'typeorm';
import { WebhookConfig } from '../config/slices';
import { Clock } from '../common/time';
import type { RepositoryEvent } from '../events/repository-events';
import type { RepositoryEntity } from '../repos/repository.entity';
import { UserAccounts } from '../users/user-accounts';
import { branchMatches } from './branch-filter';
import { WebhookDispatcher } from './webhook-dispatcher';
import type { WebhookEntity } from './webhook.entities';
import { headerEvent, REVIEW_EVENT_TYPES } from './webhook-event-types';
import { OutgoingPayload, payloadsOf } from './webhook-payloads';
import { WebhookStore } from './webhook.store';
import { SiteUrls } from '../common/site-urls';

/**
 * The outbox: an event becomes, in the transaction of the change it reports, one event row (its JSON) and
 * one pending delivery per hook that wants it. Nothing is sent from here; the dispatcher sends after commit.
 */
@Injectable()
export class WebhookOutbox {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly store: WebhookStore,
    private readonly users: UserAccounts,
    private readonly dispatcher: WebhookDispatcher,
    private readonly clock: Clock,
    private readonly webhookConfig: WebhookConfig,
  ) {}

  listensTo(repo: RepositoryEntity, tx?: EntityManager): Promise<boolean> {
    return this.store.anyActiveFor(repo.id, repo.ownerId, tx);
  }

  async record(tx: EntityManager, event: RepositoryEvent): Promise<void> {
    const repo = 'repo' in event ? event.repo : null;
    const ownerId = repo ? repo.ownerId : event.kind === 'package' ? event.ownerId : 0;
    const hooks = await this.store.activeFor(tx, repo ? repo.id : -1, ownerId);
    if (hooks.length === 0) return;
    const owner = await this.users.byId(ownerId, tx);
    if (!owner) return;
    const sender = await this.users.byId(event.senderId, tx);
    const site = this.siteUrls;
    // Commit authors and committers are named by the account their address belongs to, as Forgejo does.
    const emails =
      event.kind === 'push' ? event.changes.flatMap((change) => change.commits.flatMap((commit) => [commit.authorEmail, commit.committerEmail])) : [];
    const usernames = await this.users.namesByEmail(emails, `noreply.${site.rootHost}`, tx);
    const payloads = payloadsOf(event, { repo, owner, sender, site, usernames }, this.webhookConfig.payloadCommitLimit);
    for (const payload of payloads)
      await this.enqueue(
        tx,
        payload,
        hooks.filter((hook) => wants(hook, payload)),
      );
  }

  /** Queues one payload for the given hooks (a hook test, or an event). */
  async enqueue(tx: EntityManager, payload: OutgoingPayload, hooks: Pick<WebhookEntity, 'id'>[]): Promise<string[]> {
    if (hooks.length === 0) return [];
    const deliveries = hooks.map((hook) => ({ uuid: newDeliveryUuid(), hookId: hook.id }));
    await this.store.enqueue(tx, { event: payload.event, payload: JSON.stringify(payload.body), createdUnix: this.clock.nowUnix() }, deliveries, Date.now());
    return deliveries.map((delivery) => delivery.uuid);
  }

  committed(): void {
    this.dispatcher.wake();
  }
}

/**
 * A delivery's UUID: version 7, ordered by time, so that the unique index takes new deliveries at its end (a
 * random version 4 lands each of a push's hundred deliveries on its own page of a large index).
 */
export function newDeliveryUuid(): string {
  return timeOrderedUuid();
}

/** Whether a hook is sent a payload: its event is chosen, and a branch's name passes the branch filter. */
export function wants(hook: Pick<WebhookEntity, 'events' | 'branchFilter'>, payload: OutgoingPayload): boolean {
  const events = hook.events.split(',');
  // Choosing `issues` chooses its sub-types (assign, label, milestone) too, as Forgejo; choosing `pull_request`
  // chooses every pull request sub-type, and `pull_request_review` the three review types.
  const chosen =
    events.includes(payload.event) ||
    (headerEvent(payload.event) === 'issues' && events.includes('issues')) ||
    (payload.event.startsWith('pull_request_') && events.includes('pull_request')) ||
    (REVIEW_EVENT_TYPES.has(payload.event) && events.includes('pull_request_review'));
  if (!chosen) return false;
  return payload.branch === null || branchMatches(hook.branchFilter, payload.branch);
}
