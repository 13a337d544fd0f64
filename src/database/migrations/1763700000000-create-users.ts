import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/** Users (and organisations, which are users of another type), their e-mail addresses and access tokens. */
export class CreateUsers1763700000000 implements MigrationInterface {
  name = 'CreateUsers1763700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'user',
        columns: [
          k.id(),
          k.text('lower_name', 40),
          k.text('name', 40),
          k.text('full_name', 255),
          k.text('email', 255),
          k.flag('keep_email_private'),
          k.text('passwd_hash', 255),
          k.flag('must_change_password'),
          k.counter('type'),
          k.text('location', 255),
          k.text('website', 255),
          k.text('description', 255),
          k.counter('visibility'),
          k.flag('is_admin'),
          k.flag('is_active', true),
          k.flag('prohibit_login'),
          k.flag('is_restricted'),
          k.flag('allow_create_organization', true),
          k.counter('num_followers'),
          k.counter('num_following'),
          k.counter('num_stars'),
          k.counter('num_repos'),
          k.time('created_unix'),
          k.time('updated_unix'),
        ],
        indices: [k.index('IDX_user_lower_name', ['lower_name'], true), k.index('IDX_user_type_created', ['type', 'created_unix'])],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'email_address',
        columns: [k.id(), k.ref('uid'), k.text('email', 255), k.text('lower_email', 255), k.flag('is_activated'), k.flag('is_primary')],
        indices: [k.index('IDX_email_address_lower_email', ['lower_email'], true), k.index('IDX_email_address_uid', ['uid'])],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'access_token',
        columns: [
          k.id(),
          k.ref('uid'),
          k.text('name', 255),
          k.text('token_hash', 255),
          k.text('token_salt', 255),
          k.text('token_last_eight', 8),
          k.text('scope', 512),
          k.time('created_unix'),
          k.time('updated_unix'),
        ],
        indices: [k.index('IDX_access_token_uid', ['uid']), k.index('IDX_access_token_token_last_eight', ['token_last_eight'])],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'org_user',
        columns: [k.id(), k.ref('uid'), k.ref('org_id'), k.flag('is_public')],
        indices: [k.index('IDX_org_user_uid_org_id', ['uid', 'org_id'], true), k.index('IDX_org_user_org_id', ['org_id'])],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'team',
        columns: [
          k.id(),
          k.ref('org_id'),
          k.text('lower_name', 255),
          k.text('name', 255),
          k.text('description', 255),
          k.counter('authorize'),
          k.flag('includes_all_repositories'),
          k.flag('can_create_org_repo'),
          k.counter('num_members'),
        ],
        indices: [k.index('IDX_team_org_id_lower_name', ['org_id', 'lower_name'], true)],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'team_user',
        columns: [k.id(), k.ref('org_id'), k.ref('team_id'), k.ref('uid')],
        indices: [k.index('IDX_team_user_team_id_uid', ['team_id', 'uid'], true), k.index('IDX_team_user_uid_org_id', ['uid', 'org_id'])],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['team_user', 'team', 'org_user', 'access_token', 'email_address', 'user']) {
      await queryRunner.dropTable(table);
    }
  }
}
