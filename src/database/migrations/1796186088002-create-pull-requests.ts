import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/**
 * Pull requests: the `pull_request` table (beside their issue rows) and the repository's pull request unit, its
 * merge settings and counters. Every repository, old or new, gets the unit on with Forgejo's defaults. The
 * repository columns are added with plain ALTER TABLE (TypeORM's SQLite addColumn rebuilds the table and would
 * drop its triggers); every step first looks whether it already happened, so a rerun does no harm.
 */
export class CreatePullRequests1796186088002 implements MigrationInterface {
  name = 'CreatePullRequests1796186088002';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    const sqlite = queryRunner.connection.options.type === 'better-sqlite3';
    const flag = (value: 0 | 1) => (sqlite ? `boolean NOT NULL DEFAULT (${value})` : `tinyint NOT NULL DEFAULT ${value}`);
    const text = (length: number, value: string) =>
      sqlite ? `varchar(${length}) NOT NULL DEFAULT ('${value}')` : `varchar(${length}) NOT NULL DEFAULT '${value}'`;
    const counter = sqlite ? 'integer NOT NULL DEFAULT (0)' : 'int NOT NULL DEFAULT 0';
    const columns: [string, string][] = [
      ['num_pulls', counter],
      ['num_closed_pulls', counter],
      ['has_pull_requests', flag(1)],
      ['ignore_whitespace_conflicts', flag(0)],
      ['allow_merge_commits', flag(1)],
      ['allow_rebase', flag(1)],
      ['allow_rebase_explicit', flag(1)],
      ['allow_squash_merge', flag(1)],
      ['allow_fast_forward_only_merge', flag(1)],
      ['allow_rebase_update', flag(1)],
      ['allow_manual_merge', flag(0)],
      ['autodetect_manual_merge', flag(0)],
      ['default_delete_branch_after_merge', flag(0)],
      ['default_merge_style', text(32, 'merge')],
      ['default_allow_maintainer_edit', flag(0)],
    ];
    for (const [name, type] of columns) {
      if (!(await queryRunner.hasColumn('repository', name))) await queryRunner.query(`ALTER TABLE repository ADD COLUMN ${name} ${type}`);
    }
    if (!(await queryRunner.hasTable('pull_request'))) {
      await queryRunner.createTable(
        new Table({
          name: 'pull_request',
          columns: [
            k.id(),
            k.ref('issue_id'),
            k.ref('repo_index'),
            k.ref('base_repo_id'),
            k.ref('head_repo_id'),
            k.text('head_branch', 255),
            k.text('base_branch', 255),
            k.text('head_commit_id', 64),
            k.text('base_commit_id', 64),
            k.text('merge_base', 64),
            k.counter('status'),
            k.longText('conflicted_files'),
            k.counter('commits_ahead'),
            k.counter('commits_behind'),
            k.counter('additions'),
            k.counter('deletions'),
            k.counter('changed_files'),
            k.flag('allow_maintainer_edit'),
            k.flag('has_merged'),
            k.text('merged_commit_id', 64),
            k.ref('merger_id', { default: '0' }),
            k.time('merged_unix'),
            k.counter('check_version'),
            k.time('check_claimed_until'),
          ],
          indices: [
            k.index('IDX_pull_request_issue_id', ['issue_id'], true),
            k.index('IDX_pull_request_base_repo_id_base_branch', ['base_repo_id', 'base_branch']),
            k.index('IDX_pull_request_head_repo_id_head_branch', ['head_repo_id', 'head_branch']),
            k.index('IDX_pull_request_base_repo_id_merged_commit_id', ['base_repo_id', 'merged_commit_id']),
            k.index('IDX_pull_request_status_check_claimed_until', ['status', 'check_claimed_until']),
          ],
        }),
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (await queryRunner.hasTable('pull_request')) await queryRunner.dropTable('pull_request');
  }
}
