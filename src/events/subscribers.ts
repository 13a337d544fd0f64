import { Injectable, OnModuleInit, Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { BranchProtections } from '../access/branch-protection-policy';
import { CollaboratorsLifecycle } from '../collaborators/collaborators-lifecycle';
import { DeployKeysLifecycle } from '../deploy-keys/deploy-keys-lifecycle';
import { CommitReferences } from '../issues/commit-references';
import { IssuesLifecycle } from '../issues/issues-lifecycle';
import { KeysLifecycle } from '../keys/keys-lifecycle';
import { LabelsLifecycle } from '../labels/labels-lifecycle';
import { LanguagesLifecycle } from '../languages/languages-lifecycle';
import { LfsLifecycle } from '../lfs/lfs-lifecycle';
import { MilestonesService } from '../milestones/milestones.service';
import { MirrorsLifecycle } from '../mirrors/mirrors-lifecycle';
import { OAuth2ApplicationsService } from '../oauth2/oauth2-applications.service';
import { PackagesLifecycle } from '../packages/packages-lifecycle';
import { PullsLifecycle } from '../pulls/pulls-lifecycle';
import { PullsService } from '../pulls/pulls.service';
import { QuotaLifecycle } from '../quota/quota-lifecycle';
import { ReleasesLifecycle } from '../releases/releases-lifecycle';
import { ForksService } from '../repos/forks.service';
import { ReposLifecycle } from '../repos/repos-lifecycle';
import { RepositoryPushes } from '../repos/repository-pushes.service';
import { ReviewsService } from '../reviews/reviews.service';
import { StatusesLifecycle } from '../statuses/statuses-lifecycle';
import { TeamsLifecycle } from '../teams/teams-lifecycle';
import { UsersLifecycle } from '../users/users-lifecycle';
import { WebhookOutbox } from '../webhooks/webhook-outbox';
import { WebhooksLifecycle } from '../webhooks/webhooks-lifecycle';
import { EventAnswer, EventPayload, LifecycleEventName, LifecycleEvents } from './lifecycle-events';

/** One subscriber: the provider that handles `event`, and how. */
interface Subscription {
  event: LifecycleEventName;
  provider: Type<unknown>;
  handle(provider: unknown, payload: never): unknown;
}

function on<N extends LifecycleEventName, P>(
  event: N,
  provider: Type<P>,
  handle: (provider: P, payload: EventPayload<N>) => EventAnswer<N> | Promise<EventAnswer<N>>,
): Subscription {
  return { event, provider, handle: handle as Subscription['handle'] };
}

/**
 * Every subscriber of every lifecycle event, in the order each event's handlers run (LifecycleEvents.emit awaits
 * them one after the other). Handlers given a `tx` run inside the emitter's transaction: what they write or
 * delete commits with it, and their error undoes it. A module that keeps rows about users or repositories
 * subscribes its cleaner here (test/e2e/deletion-cleanup.e2e-spec.ts fails otherwise).
 */
export const SUBSCRIPTIONS: Subscription[] = [
  // A user or an organisation is deleted (UsersService, OrganizationsService): in the deleting transaction,
  // before its row goes. A user or organisation that still owns packages is refused (and nothing is deleted).
  on('user.deleted', UsersLifecycle, (users, event) => users.userDeleted(event)),
  on('user.deleted', QuotaLifecycle, (quota, event) => quota.userDeleted(event)),
  on('user.deleted', ReposLifecycle, (repos, event) => repos.userDeleted(event)),
  on('user.deleted', LabelsLifecycle, (labels, event) => labels.userDeleted(event)),
  on('user.deleted', IssuesLifecycle, (issues, event) => issues.userDeleted(event)),
  on('user.deleted', LfsLifecycle, (lfs, event) => lfs.userDeleted(event)),
  on('user.deleted', KeysLifecycle, (keys, event) => keys.userDeleted(event)),
  on('user.deleted', CollaboratorsLifecycle, (collaborators, event) => collaborators.userDeleted(event)),
  on('user.deleted', PackagesLifecycle, (packages, event) => packages.userDeleted(event)),
  on('user.deleted', WebhooksLifecycle, (webhooks, event) => webhooks.userDeleted(event)),
  // A deleted user's OAuth2 applications go, and with them everything issued to them or for the user.
  on('user.deleted', OAuth2ApplicationsService, (applications, { tx, user }) => applications.deleteAllOfUser(tx, user.id)),
  // Their pending reviews and the requests addressed to them (reviews they gave stay, shown as a ghost's).
  on('user.deleted', ReviewsService, (reviews, { tx, user }) => reviews.deleteOpenOfUser(tx, user.id)),

  // A team is deleted (TeamsService): in the deleting transaction, before its row goes. The reviews asked of it go.
  on('team.deleted', ReviewsService, (reviews, { tx, team }) => reviews.deleteRequestsOfTeam(tx, team.id)),

  // A repository is deleted (RepositoriesService): in the deleting transaction, after its row, stars and
  // watches went; a handler may answer work for after the commit (files on disk), run in this order.
  on('repository.deleted', ForksService, (forks, event) => forks.repositoryDeleted(event)),
  on('repository.deleted', ReposLifecycle, (repos, event) => repos.repositoryDeleted(event)),
  on('repository.deleted', LabelsLifecycle, (labels, event) => labels.repositoryDeleted(event)),
  on('repository.deleted', MilestonesService, (milestones, { tx, repo }) => milestones.deleteAllOfRepository(tx, repo.id)),
  on('repository.deleted', IssuesLifecycle, (issues, event) => issues.repositoryDeleted(event)),
  on('repository.deleted', LfsLifecycle, (lfs, event) => lfs.repositoryDeleted(event)),
  on('repository.deleted', StatusesLifecycle, (statuses, event) => statuses.repositoryDeleted(event)),
  on('repository.deleted', PullsLifecycle, (pulls, event) => pulls.repositoryDeleted(event)),
  on('repository.deleted', ReleasesLifecycle, (releases, event) => releases.repositoryDeleted(event)),
  on('repository.deleted', CollaboratorsLifecycle, (collaborators, event) => collaborators.repositoryDeleted(event)),
  on('repository.deleted', DeployKeysLifecycle, (keys, event) => keys.repositoryDeleted(event)),
  on('repository.deleted', BranchProtections, (protections, { tx, repo }) => protections.deleteRulesOfRepository(tx, repo.id)),
  on('repository.deleted', TeamsLifecycle, (teams, event) => teams.repositoryDeleted(event)),
  on('repository.deleted', LanguagesLifecycle, (languages, event) => languages.repositoryDeleted(event)),
  on('repository.deleted', MirrorsLifecycle, (mirrors, event) => mirrors.repositoryDeleted(event)),
  on('repository.deleted', WebhooksLifecycle, (webhooks, event) => webhooks.repositoryDeleted(event)),
  on('repository.deleted', ReviewsService, (reviews, { tx, repo }) => reviews.deleteOfRepository(tx, repo.id)),

  // A repository is created (RepositoryCreation), in the creating transaction.
  on('repository.created', CollaboratorsLifecycle, (collaborators, event) => collaborators.repositoryCreated(event)),

  // The same material is never a user's key and a deploy key at once (PublicKeysService asks).
  on('key-material.claimed', DeployKeysLifecycle, (keys, claim) => keys.materialTaken(claim)),

  // A mirror's interval is edited (RepositorySettings): the mirrors module owns the mirror records.
  on('mirror.interval-edited', MirrorsLifecycle, (mirrors, edit) => mirrors.intervalEdited(edit)),

  // The hooks of a receive-pack (PushHooks, for HTTP and SSH alike): the rules and effects of a push.
  on('push.starting', RepositoryPushes, (pushes, push) => pushes.allowance(push)),
  on('push.pre-receive', RepositoryPushes, (pushes, { push, updates, objects }) => pushes.preReceive(push, updates, objects)),
  on('push.post-receive', RepositoryPushes, (pushes, { push, updates }) => pushes.postReceive(push, updates)),
  // A push by a person recorded (RepositoryEvents.recordPush, in its transaction), then committed: the issue
  // references of its commits.
  on('push.recorded', CommitReferences, (references, { tx, repo, pusherId, moves }) => references.record(tx, repo, pusherId, moves)),
  on('push.committed', CommitReferences, (references) => references.committed()),
  // ... and, in that transaction, the tests of the open pull requests into the branches it moved.
  on('push.recorded', PullsService, (pulls, { tx, repo, moves }) => pulls.onPushRecorded(tx, repo.id, moves)),
  // Refs moved and committed (RepositoryPushes), before the push is answered: pull requests follow their branches.
  on('refs.changed', PullsService, (pulls, { repositoryId, updates, senderId }) => pulls.onRefsChanged(repositoryId, updates, senderId)),

  // A repository's activity (RepositoryEvents): the webhooks outbox records it in the transaction of the change
  // and starts its deliveries after the commit.
  on('activity.listened', WebhookOutbox, (outbox, { repo, tx }) => outbox.listensTo(repo, tx)),
  on('activity.recorded', WebhookOutbox, (outbox, { tx, event }) => outbox.record(tx, event)),
  on('activity.committed', WebhookOutbox, (outbox) => outbox.committed()),
];

/**
 * Subscribes SUBSCRIPTIONS at start-up, before any module's own start-up work (EventsModule is global: first). The
 * application has every provider listed (the e2e tests start it whole); a testing module of a few feature modules
 * subscribes those it has.
 */
@Injectable()
export class LifecycleSubscribers implements OnModuleInit {
  constructor(
    private readonly events: LifecycleEvents,
    private readonly modules: ModuleRef,
  ) {}

  onModuleInit(): void {
    for (const subscription of SUBSCRIPTIONS) {
      const provider = this.present(subscription.provider);
      // A context of a few modules (the fast tier's service harness) lacks the others' subscribers.
      if (provider === undefined) continue;
      this.events.subscribe(subscription.event, (payload) => subscription.handle(provider, payload as never) as never);
    }
  }

  private present(provider: Type<unknown>): unknown {
    try {
      return this.modules.get(provider, { strict: false });
    } catch {
      return undefined;
    }
  }
}
