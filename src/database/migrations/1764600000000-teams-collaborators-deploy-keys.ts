import { MigrationInterface, QueryRunner, Table, TableColumn } from 'typeorm';
import { migrationKit } from '../migration-kit';

/** Teams with units and repositories, collaborations and deploy keys: the grants of the access policy. */
export class TeamsCollaboratorsDeployKeys1764600000000 implements MigrationInterface {
  name = 'TeamsCollaboratorsDeployKeys1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    await queryRunner.addColumn('team', new TableColumn(k.text('units', 1024)));
    await queryRunner.createTable(
      new Table({
        name: 'team_repo',
        columns: [k.id(), k.ref('org_id'), k.ref('team_id'), k.ref('repo_id')],
        indices: [k.index('IDX_team_repo_team_id_repo_id', ['team_id', 'repo_id'], true), k.index('IDX_team_repo_repo_id', ['repo_id'])],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'collaboration',
        columns: [k.id(), k.ref('repo_id'), k.ref('user_id'), k.counter('mode'), k.time('created_unix'), k.time('updated_unix')],
        indices: [k.index('IDX_collaboration_repo_id_user_id', ['repo_id', 'user_id'], true), k.index('IDX_collaboration_user_id', ['user_id'])],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'deploy_key',
        columns: [
          k.id(),
          k.ref('repo_id'),
          k.text('name', 255),
          k.text('fingerprint', 64),
          k.longText('content'),
          k.counter('mode'),
          k.time('created_unix'),
          k.time('updated_unix'),
        ],
        indices: [k.index('IDX_deploy_key_repo_id_fingerprint', ['repo_id', 'fingerprint'], true), k.index('IDX_deploy_key_fingerprint', ['fingerprint'])],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('deploy_key');
    await queryRunner.dropTable('collaboration');
    await queryRunner.dropTable('team_repo');
    await queryRunner.dropColumn('team', 'units');
  }
}
