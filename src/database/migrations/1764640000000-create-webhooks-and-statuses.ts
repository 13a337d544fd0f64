import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/** Commit statuses, webhooks, their events and the delivery outbox, and the lease of the pruning job. */
export class CreateWebhooksAndStatuses1764640000000 implements MigrationInterface {
  name = 'CreateWebhooksAndStatuses1764640000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'commit_status',
        columns: [
          k.id(),
          k.ref('repo_id'),
          k.text('sha', 64),
          k.text('state', 16),
          k.longText('target_url'),
          k.longText('description'),
          k.text('context', 255),
          k.ref('creator_id'),
          k.time('created_unix'),
          k.time('updated_unix'),
        ],
        indices: [k.index('IDX_commit_status_repo_id_sha', ['repo_id', 'sha'])],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook',
        columns: [
          k.id(),
          k.ref('repo_id', { default: '0' }),
          k.ref('owner_id', { default: '0' }),
          k.flag('is_system'),
          k.text('type', 16),
          k.longText('url'),
          k.text('http_method', 8),
          k.text('content_type', 8),
          k.longText('secret'),
          k.longText('authorization_header'),
          k.text('events', 512),
          k.text('branch_filter', 255),
          k.flag('is_active'),
          k.text('lease_token', 64),
          k.time('lease_expires_ms'),
          k.time('created_unix'),
          k.time('updated_unix'),
        ],
        indices: [k.index('IDX_webhook_repo_id', ['repo_id']), k.index('IDX_webhook_owner_id', ['owner_id'])],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook_event',
        columns: [k.id(), k.text('event', 32), k.longText('payload'), k.time('created_unix')],
        indices: [k.index('IDX_webhook_event_created_unix', ['created_unix'])],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook_delivery',
        columns: [
          k.id(),
          k.text('uuid', 36),
          k.ref('hook_id'),
          k.ref('event_id'),
          k.text('event', 32),
          k.flag('done'),
          k.text('status', 16),
          k.counter('attempts'),
          k.time('next_attempt_ms'),
          k.text('claim_token', 64),
          k.time('claim_expires_ms'),
          k.longText('request_headers'),
          k.counter('response_status'),
          k.longText('response_body'),
          k.counter('duration_ms'),
          k.time('created_ms'),
          k.time('delivered_ms'),
        ],
        indices: [
          k.index('IDX_webhook_delivery_uuid', ['uuid'], true),
          k.index('IDX_webhook_delivery_hook_id_done_id', ['hook_id', 'done', 'id']),
          k.index('IDX_webhook_delivery_done_next_attempt_ms', ['done', 'next_attempt_ms']),
          k.index('IDX_webhook_delivery_claim_token', ['claim_token']),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook_lease',
        columns: [k.id(), k.text('name', 32), k.time('next_run_ms')],
        indices: [k.index('IDX_webhook_lease_name', ['name'], true)],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['webhook_lease', 'webhook_delivery', 'webhook_event', 'webhook', 'commit_status']) await queryRunner.dropTable(table);
  }
}
