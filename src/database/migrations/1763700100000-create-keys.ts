import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/** SSH public keys and GPG keys (primary keys and subkeys, one row each). */
export class CreateKeys1763700100000 implements MigrationInterface {
  name = 'CreateKeys1763700100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'public_key',
        columns: [
          k.id(),
          k.ref('owner_id'),
          k.text('name', 255),
          k.text('fingerprint', 64),
          k.longText('content'),
          k.time('created_unix'),
          k.time('updated_unix'),
        ],
        indices: [k.index('IDX_public_key_fingerprint', ['fingerprint'], true), k.index('IDX_public_key_owner_id_name', ['owner_id', 'name'], true)],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'gpg_key',
        columns: [
          k.id(),
          k.ref('owner_id'),
          k.text('key_id', 16),
          k.text('primary_key_id', 16),
          k.longText('content'),
          k.longText('emails'),
          k.time('created_unix'),
          k.time('expired_unix'),
          k.time('added_unix'),
          k.flag('can_sign'),
          k.flag('can_encrypt_comms'),
          k.flag('can_encrypt_storage'),
          k.flag('can_certify'),
          k.flag('verified'),
          k.longText('armored'),
        ],
        indices: [
          k.index('IDX_gpg_key_key_id', ['key_id'], true),
          k.index('IDX_gpg_key_owner_id_primary_key_id', ['owner_id', 'primary_key_id']),
          k.index('IDX_gpg_key_primary_key_id', ['primary_key_id']),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('gpg_key');
    await queryRunner.dropTable('public_key');
  }
}
