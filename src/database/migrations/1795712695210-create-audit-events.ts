import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/** The audit log (src/audit): append-only, pruned by age. Created only when missing, so a rerun does nothing. */
export class CreateAuditEvents1795712695210 implements MigrationInterface {
  name = 'CreateAuditEvents1795712695210';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'audit_event',
        columns: [
          k.id(),
          k.time('created_unix'),
          k.ref('actor_id', { default: '0' }),
          k.text('actor_name', 255),
          k.text('actor_lower', 255),
          k.text('address', 64),
          k.text('action', 64),
          k.text('outcome', 16),
          k.text('target_type', 32),
          k.ref('target_id', { default: '0' }),
          k.text('target_name', 255),
          k.text('target_lower', 255),
          k.longText('detail'),
        ],
        indices: [
          k.index('IDX_audit_event_created_unix', ['created_unix']),
          k.index('IDX_audit_event_action', ['action']),
          k.index('IDX_audit_event_actor_lower', ['actor_lower']),
        ],
      }),
      true,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('audit_event', true);
  }
}
