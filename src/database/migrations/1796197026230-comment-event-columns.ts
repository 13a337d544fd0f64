import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The columns of what a timeline entry changed (label, milestones, assignee, titles, refs, dependent issue), on
 * `comment`; every old row is a comment or a close/reopen/commit reference and keeps the defaults. Added with
 * plain ALTER TABLE (TypeORM's SQLite addColumn rebuilds the table); each column only when missing, so that a
 * rerun, or a run interrupted halfway, does no harm.
 */
export class CommentEventColumns1796197026230 implements MigrationInterface {
  name = 'CommentEventColumns1796197026230';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.options.type === 'better-sqlite3';
    const ref = sqlite ? 'integer NOT NULL DEFAULT (0)' : 'bigint NOT NULL DEFAULT 0';
    const flag = sqlite ? 'boolean NOT NULL DEFAULT (0)' : 'tinyint NOT NULL DEFAULT 0';
    const text = sqlite ? "varchar(255) NOT NULL DEFAULT ('')" : "varchar(255) NOT NULL DEFAULT ''";
    const columns: [string, string][] = [
      ['label_id', ref],
      ['old_milestone_id', ref],
      ['milestone_id', ref],
      ['assignee_id', ref],
      ['removed_assignee', flag],
      ['old_title', text],
      ['new_title', text],
      ['old_ref', text],
      ['new_ref', text],
      ['dependent_issue_id', ref],
    ];
    for (const [name, type] of columns) {
      if (!(await queryRunner.hasColumn('comment', name))) await queryRunner.query(`ALTER TABLE comment ADD COLUMN ${name} ${type}`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const name of [
      'label_id',
      'old_milestone_id',
      'milestone_id',
      'assignee_id',
      'removed_assignee',
      'old_title',
      'new_title',
      'old_ref',
      'new_ref',
      'dependent_issue_id',
    ]) {
      if (await queryRunner.hasColumn('comment', name)) await queryRunner.query(`ALTER TABLE comment DROP COLUMN ${name}`);
    }
  }
}
