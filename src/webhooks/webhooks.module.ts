import { Module } from '@nestjs/common';
import { ClaimsModule } from '../claims/claims.module';
import { GitModule } from '../git/git.module';
import { HOST_RESOLVER, systemResolver } from '../outbound/host-policy';
import { SecretBox } from '../secrets/secret-box';
import { ReposModule } from '../repos/repos.module';
import { UsersModule } from '../users/users.module';
import { HooksService } from './hooks.service';
import { OrganizationHooksController } from './organization-hooks.controller';
import { RepositoryHooksController } from './repository-hooks.controller';
import { SystemHooksController } from './system-hooks.controller';
import { UserHooksController } from './user-hooks.controller';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookOutbox } from './webhook-outbox';
import { WebhookSender } from './webhook-sender';
import { WebhookStore } from './webhook.store';
import { WebhooksLifecycle } from './webhooks-lifecycle';

/**
 * Webhooks: the hooks API of every scope, the outbox that records events with the changes they report, and
 * the dispatcher that delivers them (retries, per-hook order, host policy, history).
 */
@Module({
  imports: [UsersModule, ReposModule, GitModule, ClaimsModule],
  controllers: [RepositoryHooksController, OrganizationHooksController, UserHooksController, SystemHooksController],
  providers: [
    { provide: HOST_RESOLVER, useValue: systemResolver },
    SecretBox,
    WebhookStore,
    WebhookSender,
    WebhookDispatcher,
    WebhookOutbox,
    HooksService,
    WebhooksLifecycle,
  ],
})
export class WebhooksModule {}
