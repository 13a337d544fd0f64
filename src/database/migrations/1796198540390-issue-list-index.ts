import { MigrationInterface, QueryRunner, TableIndex } from 'typeorm';

const NAME = 'IDX_issue_repo_id_is_closed_created_unix';

/**
 * A repository's list without a `type` (issues and pull requests alike, the API's default) reads its open or
 * closed issues newest first from this index and stops at the page; the index led by `is_pull` could only serve
 * it by sorting every issue of the repository. Made only when missing.
 */
export class IssueListIndex1796198540390 implements MigrationInterface {
  name = 'IssueListIndex1796198540390';

  async up(queryRunner: QueryRunner): Promise<void> {
    const table = await queryRunner.getTable('issue');
    if (table && !table.indices.some((index) => index.name === NAME)) {
      await queryRunner.createIndex('issue', new TableIndex({ name: NAME, columnNames: ['repo_id', 'is_closed', 'created_unix'] }));
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const table = await queryRunner.getTable('issue');
    if (table?.indices.some((index) => index.name === NAME)) await queryRunner.dropIndex('issue', NAME);
  }
}
