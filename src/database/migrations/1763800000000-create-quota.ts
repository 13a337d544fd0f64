import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/** Quota rules, groups, the rules of each group and the users and organisations mapped to groups. */
export class CreateQuota1763800000000 implements MigrationInterface {
  name = 'CreateQuota1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'quota_rule',
        columns: [k.id(), k.text('name', 255), { ...k.time('limit_bytes') }, k.longText('subjects')],
        indices: [k.index('IDX_quota_rule_name', ['name'], true)],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'quota_group',
        columns: [k.id(), k.text('name', 255)],
        indices: [k.index('IDX_quota_group_name', ['name'], true)],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'quota_group_rule',
        columns: [k.id(), k.ref('group_id'), k.ref('rule_id')],
        indices: [k.index('IDX_quota_group_rule_group_id_rule_id', ['group_id', 'rule_id'], true), k.index('IDX_quota_group_rule_rule_id', ['rule_id'])],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'quota_group_mapping',
        columns: [k.id(), k.ref('group_id'), k.ref('target_id')],
        indices: [
          k.index('IDX_quota_group_mapping_group_id_target_id', ['group_id', 'target_id'], true),
          k.index('IDX_quota_group_mapping_target_id', ['target_id']),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('quota_group_mapping');
    await queryRunner.dropTable('quota_group_rule');
    await queryRunner.dropTable('quota_group');
    await queryRunner.dropTable('quota_rule');
  }
}
