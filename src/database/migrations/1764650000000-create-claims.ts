import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/**
 * Claims shared by every instance on one database (src/claims): `claim` holds what is in flight (bytes of
 * quota reserved by an upload, a push, a migration; a slot of background work), each with an expiry so that
 * the claims of a process that died lapse by themselves; `claim_ledger` holds one version per scope, moved
 * by a conditional update with every claim taken or settled, so that two instances (or two Galera nodes)
 * cannot both take the last of a budget. No entities: only src/claims/claim.store.ts reads them.
 */
export class CreateClaims1764650000000 implements MigrationInterface {
  name = 'CreateClaims1764650000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'claim_ledger',
        columns: [
          { name: 'scope', type: 'varchar', length: '64', isPrimary: true },
          { ...k.ref('version'), default: '0' },
        ],
      }),
      true,
    );
    await queryRunner.createTable(
      new Table({
        name: 'claim',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          k.text('scope', 64),
          k.text('item', 32),
          { ...k.ref('owner_id'), default: '0' },
          { ...k.ref('amount'), default: '0' },
          k.time('expires_unix'),
          k.time('created_unix'),
        ],
        indices: [k.index('IDX_claim_scope_expires', ['scope', 'expires_unix'])],
      }),
      true,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('claim', true);
    await queryRunner.dropTable('claim_ledger', true);
  }
}
