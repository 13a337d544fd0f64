import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/**
 * The OAuth2 / OpenID Connect provider (src/oauth2): registered applications, what the provider keeps between
 * requests (grants, codes, tokens, sessions, found by the hash of their ids) and its one signing key. Every
 * table is made only when missing, so a second node running the same migration changes nothing.
 */
export class CreateOAuth21795712282862 implements MigrationInterface {
  name = 'CreateOAuth21795712282862';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'oauth2_application',
        columns: [
          k.id(),
          k.ref('uid'),
          k.text('name', 255),
          k.text('client_id', 64),
          k.text('client_secret_hash', 255),
          k.text('client_secret_salt', 64),
          k.longText('redirect_uris'),
          k.flag('confidential_client'),
          k.time('created_unix'),
          k.time('updated_unix'),
        ],
        indices: [k.index('IDX_oauth2_application_uid', ['uid']), k.index('UQE_oauth2_application_client_id', ['client_id'], true)],
      }),
      true,
    );
    await queryRunner.createTable(
      new Table({
        name: 'oauth2_record',
        columns: [
          { ...k.text('kind', 32), isPrimary: true },
          { ...k.text('id_hash', 64), isPrimary: true },
          k.longText('payload'),
          k.text('grant_id', 64),
          k.text('client_id', 64),
          { ...k.ref('account_id'), default: '0' },
          k.text('uid', 64),
          k.time('expires_unix'),
          k.time('consumed_unix'),
        ],
        indices: [
          k.index('IDX_oauth2_record_grant_id', ['grant_id']),
          k.index('IDX_oauth2_record_client_id', ['client_id']),
          k.index('IDX_oauth2_record_uid', ['uid']),
          k.index('IDX_oauth2_record_expires_unix', ['expires_unix']),
        ],
      }),
      true,
    );
    await queryRunner.createTable(
      new Table({
        name: 'oauth2_signing_key',
        columns: [{ ...k.ref('id'), isPrimary: true }, k.longText('sealed_jwk'), k.time('created_unix')],
      }),
      true,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['oauth2_signing_key', 'oauth2_record', 'oauth2_application']) await queryRunner.dropTable(table, true);
  }
}
