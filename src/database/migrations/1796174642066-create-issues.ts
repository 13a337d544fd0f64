import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/**
 * The issue tracker: `issue` (issues and, later, pull requests), `issue_counter` (the last number given per
 * repository), `issue_word` (the word index of titles and bodies), `issue_label`, `issue_assignee`, `comment`, and the repository's tracker settings and
 * issue counters. Every repository, old or new, gets the built-in tracker on, as Forgejo's default. The
 * repository columns are added with plain ALTER TABLE (TypeORM's SQLite addColumn rebuilds the table and would
 * drop its triggers); every step first looks whether it already happened, so a rerun does no harm.
 */
export class CreateIssues1796174642066 implements MigrationInterface {
  name = 'CreateIssues1796174642066';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    const sqlite = queryRunner.connection.options.type === 'better-sqlite3';
    const flag = (value: 0 | 1) => (sqlite ? `boolean NOT NULL DEFAULT (${value})` : `tinyint NOT NULL DEFAULT ${value}`);
    const text = (length: number) => (sqlite ? `varchar(${length}) NOT NULL DEFAULT ('')` : `varchar(${length}) NOT NULL DEFAULT ''`);
    const counter = sqlite ? 'integer NOT NULL DEFAULT (0)' : 'int NOT NULL DEFAULT 0';
    const columns: [string, string][] = [
      ['has_issues', flag(1)],
      ['enable_time_tracker', flag(1)],
      ['allow_only_contributors_to_track_time', flag(1)],
      ['enable_issue_dependencies', flag(1)],
      ['external_tracker_url', text(2048)],
      ['external_tracker_format', text(2048)],
      ['external_tracker_style', text(16)],
      ['external_tracker_regexp', text(1024)],
      ['num_issues', counter],
      ['num_closed_issues', counter],
    ];
    for (const [name, type] of columns) {
      if (!(await queryRunner.hasColumn('repository', name))) await queryRunner.query(`ALTER TABLE repository ADD COLUMN ${name} ${type}`);
    }
    if (!(await queryRunner.hasTable('issue'))) {
      await queryRunner.createTable(
        new Table({
          name: 'issue',
          columns: [
            k.id(),
            k.ref('repo_id'),
            k.ref('repo_index'),
            k.ref('poster_id'),
            k.text('title', 255),
            k.longText('body'),
            k.text('ref', 255),
            k.ref('milestone_id', { default: '0' }),
            k.flag('is_pull'),
            k.flag('is_closed'),
            k.flag('is_locked'),
            k.counter('num_comments'),
            k.counter('pin_order'),
            k.time('deadline_unix'),
            k.time('created_unix'),
            k.time('updated_unix'),
            k.time('closed_unix'),
          ],
          indices: [
            k.index('IDX_issue_repo_id_repo_index', ['repo_id', 'repo_index'], true),
            k.index('IDX_issue_repo_id_is_pull_is_closed_created_unix', ['repo_id', 'is_pull', 'is_closed', 'created_unix']),
            k.index('IDX_issue_poster_id', ['poster_id']),
            k.index('IDX_issue_updated_unix', ['updated_unix']),
          ],
        }),
      );
    }
    if (!(await queryRunner.hasTable('issue_counter'))) {
      await queryRunner.createTable(new Table({ name: 'issue_counter', columns: [k.ref('repo_id', { isPrimary: true }), k.ref('max_index')] }));
    }
    if (!(await queryRunner.hasTable('issue_word'))) {
      await queryRunner.createTable(
        new Table({
          name: 'issue_word',
          columns: [k.id(), k.ref('issue_id'), k.ref('repo_id'), k.text('word', 64)],
          indices: [
            k.index('IDX_issue_word_repo_id_word', ['repo_id', 'word']),
            k.index('IDX_issue_word_word', ['word']),
            k.index('IDX_issue_word_issue_id', ['issue_id']),
          ],
        }),
      );
    }
    if (!(await queryRunner.hasTable('issue_label'))) {
      await queryRunner.createTable(
        new Table({
          name: 'issue_label',
          columns: [k.id(), k.ref('issue_id'), k.ref('label_id')],
          indices: [k.index('IDX_issue_label_issue_id_label_id', ['issue_id', 'label_id'], true), k.index('IDX_issue_label_label_id', ['label_id'])],
        }),
      );
    }
    if (!(await queryRunner.hasTable('issue_assignee'))) {
      await queryRunner.createTable(
        new Table({
          name: 'issue_assignee',
          columns: [k.id(), k.ref('issue_id'), k.ref('assignee_id')],
          indices: [
            k.index('IDX_issue_assignee_issue_id_assignee_id', ['issue_id', 'assignee_id'], true),
            k.index('IDX_issue_assignee_assignee_id', ['assignee_id']),
          ],
        }),
      );
    }
    if (!(await queryRunner.hasTable('comment'))) {
      await queryRunner.createTable(
        new Table({
          name: 'comment',
          columns: [
            k.id(),
            k.counter('type'),
            k.ref('issue_id'),
            k.ref('repo_id'),
            k.ref('poster_id'),
            k.longText('body'),
            k.text('commit_sha', 64),
            k.time('created_unix'),
            k.time('updated_unix'),
          ],
          indices: [
            k.index('IDX_comment_issue_id_created_unix', ['issue_id', 'created_unix']),
            k.index('IDX_comment_repo_id_type_updated_unix', ['repo_id', 'type', 'updated_unix']),
            k.index('IDX_comment_poster_id', ['poster_id']),
          ],
        }),
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('comment', true);
    await queryRunner.dropTable('issue_assignee', true);
    await queryRunner.dropTable('issue_label', true);
    await queryRunner.dropTable('issue_word', true);
    await queryRunner.dropTable('issue_counter', true);
    await queryRunner.dropTable('issue', true);
    for (const name of [
      'num_closed_issues',
      'num_issues',
      'external_tracker_regexp',
      'external_tracker_style',
      'external_tracker_format',
      'external_tracker_url',
      'enable_issue_dependencies',
      'allow_only_contributors_to_track_time',
      'enable_time_tracker',
      'has_issues',
    ]) {
      await queryRunner.query(`ALTER TABLE repository DROP COLUMN ${name}`);
    }
  }
}
