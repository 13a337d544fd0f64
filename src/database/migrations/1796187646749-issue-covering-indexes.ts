import { MigrationInterface, QueryRunner, TableIndex } from 'typeorm';

/** Indexes that replace others, as [table, new index, its columns, the index it replaces]. */
const REPLACEMENTS: [string, string, string[], string, string[]][] = [
  ['issue_label', 'IDX_issue_label_label_id_issue_id', ['label_id', 'issue_id'], 'IDX_issue_label_label_id', ['label_id']],
  ['issue_word', 'IDX_issue_word_word_issue_id', ['word', 'issue_id'], 'IDX_issue_word_word', ['word']],
  ['issue_word', 'IDX_issue_word_repo_id_word_issue_id', ['repo_id', 'word', 'issue_id'], 'IDX_issue_word_repo_id_word', ['repo_id', 'word']],
];

/**
 * The indexes by which a `labels` filter and a `q` find issues also hold the issue: the issues of a label or of a
 * word are read from the index alone, not row by row. Each replaces the index without the issue; every step first
 * looks whether it already happened.
 */
export class IssueCoveringIndexes1796187646749 implements MigrationInterface {
  name = 'IssueCoveringIndexes1796187646749';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const [tableName, name, columnNames, old] of REPLACEMENTS) {
      const table = await queryRunner.getTable(tableName);
      if (!table) continue;
      if (!table.indices.some((index) => index.name === name)) await queryRunner.createIndex(tableName, new TableIndex({ name, columnNames }));
      if (table.indices.some((index) => index.name === old)) await queryRunner.dropIndex(tableName, old);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const [tableName, name, , old, oldColumns] of REPLACEMENTS) {
      const table = await queryRunner.getTable(tableName);
      if (!table) continue;
      if (!table.indices.some((index) => index.name === old)) await queryRunner.createIndex(tableName, new TableIndex({ name: old, columnNames: oldColumns }));
      if (table.indices.some((index) => index.name === name)) await queryRunner.dropIndex(tableName, name);
    }
  }
}
