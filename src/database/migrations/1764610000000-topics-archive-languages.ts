import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/**
 * Repository topics, the archived state and language statistics. `repository.topics` keeps the repository's topic names (sorted,
 * comma-separated) for its JSON; `topic` and `repo_topic` index them for the exact topic search and the topic
 * list. `language_stat` holds the bytes per language measured at one commit of the default branch, and
 * `repository.primary_language` the largest of them. The repository columns are added with plain ALTER TABLE: TypeORM's SQLite addColumn rebuilds the table,
 * which would drop the triggers other migrations put on it.
 */
export class TopicsArchiveLanguages1764610000000 implements MigrationInterface {
  name = 'TopicsArchiveLanguages1764610000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    const sqlite = queryRunner.connection.options.type === 'better-sqlite3';
    const columns = sqlite
      ? [
          'is_archived boolean NOT NULL DEFAULT (0)',
          'archived_unix integer NOT NULL DEFAULT (0)',
          "topics varchar(1024) NOT NULL DEFAULT ('')",
          "primary_language varchar(50) NOT NULL DEFAULT ('')",
        ]
      : [
          'is_archived tinyint NOT NULL DEFAULT 0',
          'archived_unix bigint NOT NULL DEFAULT 0',
          "topics varchar(1024) NOT NULL DEFAULT ''",
          "primary_language varchar(50) NOT NULL DEFAULT ''",
        ];
    for (const column of columns) await queryRunner.query(`ALTER TABLE repository ADD COLUMN ${column}`);
    await queryRunner.createTable(
      new Table({
        name: 'topic',
        columns: [k.id(), k.text('name', 50), k.counter('repo_count'), k.time('created_unix'), k.time('updated_unix')],
        indices: [k.index('IDX_topic_name', ['name'], true), k.index('IDX_topic_repo_count', ['repo_count'])],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'language_stat',
        columns: [k.id(), k.ref('repo_id'), k.text('commit_id', 64), k.text('language', 50), k.ref('size', { default: '0' })],
        indices: [k.index('IDX_language_stat_repo_id_language', ['repo_id', 'language'], true)],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'repo_topic',
        columns: [k.id(), k.ref('repo_id'), k.ref('topic_id')],
        indices: [
          k.index('IDX_repo_topic_repo_id_topic_id', ['repo_id', 'topic_id'], true),
          k.index('IDX_repo_topic_topic_id_repo_id', ['topic_id', 'repo_id']),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('repo_topic');
    await queryRunner.dropTable('language_stat');
    await queryRunner.dropTable('topic');
    for (const column of ['primary_language', 'topics', 'archived_unix', 'is_archived'])
      await queryRunner.query(`ALTER TABLE repository DROP COLUMN ${column}`);
  }
}
