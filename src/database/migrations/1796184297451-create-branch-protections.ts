import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/** Branch protection rules (`protected_branch`), one row per rule of a repository. Created only when missing. */
export class CreateBranchProtections1796184297451 implements MigrationInterface {
  name = 'CreateBranchProtections1796184297451';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    const flags = [
      'can_push',
      'enable_whitelist',
      'whitelist_deploy_keys',
      'enable_merge_whitelist',
      'enable_status_check',
      'enable_approvals_whitelist',
      'block_on_rejected_reviews',
      'block_on_official_review_requests',
      'block_on_outdated_branch',
      'dismiss_stale_approvals',
      'ignore_stale_approvals',
      'require_signed_commits',
      'apply_to_admins',
    ];
    const lists = [
      'whitelist_user_ids',
      'whitelist_team_ids',
      'merge_whitelist_user_ids',
      'merge_whitelist_team_ids',
      'status_check_contexts',
      'approvals_whitelist_user_ids',
      'approvals_whitelist_team_ids',
    ];
    await queryRunner.createTable(
      new Table({
        name: 'protected_branch',
        columns: [
          k.id(),
          k.ref('repo_id'),
          k.text('rule_name', 255),
          ...flags.map((name) => k.flag(name)),
          ...lists.map((name) => k.longText(name)),
          k.counter('required_approvals'),
          k.longText('protected_file_patterns'),
          k.longText('unprotected_file_patterns'),
          k.time('created_unix'),
          k.time('updated_unix'),
        ],
        indices: [k.index('IDX_protected_branch_repo_id_rule_name', ['repo_id', 'rule_name'], true)],
      }),
      true,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('protected_branch', true);
  }
}
