import { MigrationInterface, QueryRunner, TableIndex } from 'typeorm';

const INDEXES = [
  { name: 'IDX_issue_repo_id_is_pull_created_unix', columnNames: ['repo_id', 'is_pull', 'created_unix'] },
  { name: 'IDX_issue_repo_id_created_unix', columnNames: ['repo_id', 'created_unix'] },
];

/**
 * Lists of every state (`state=all`, Renovate's `type=issues` list before each run) read their page newest first
 * from these and stop at it; the indexes that hold `is_closed` before `created_unix` could only serve them by
 * sorting every issue of the repository (8.3 ms for 50 000 on SQLite, against a walk of one page). Made only
 * when missing.
 */
export class IssueAllStatesIndexes1796213700000 implements MigrationInterface {
  name = 'IssueAllStatesIndexes1796213700000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const table = await queryRunner.getTable('issue');
    for (const index of INDEXES) {
      if (table && !table.indices.some((existing) => existing.name === index.name)) await queryRunner.createIndex('issue', new TableIndex(index));
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const table = await queryRunner.getTable('issue');
    for (const index of INDEXES) if (table?.indices.some((existing) => existing.name === index.name)) await queryRunner.dropIndex('issue', index.name);
  }
}
