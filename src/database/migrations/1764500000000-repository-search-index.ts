import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The repository search index (repos/repository-search.ts explains its use), kept by database triggers in the
 * same statement as every write of a repository row, whoever writes it (Anvil, the CLI, or SQL from outside):
 *
 * - SQLite: FTS5 external-content tables over `repository.lower_name` and `repository.description` with the
 *   `trigram` tokenizer (case-folding); they store only the index, the texts stay in `repository`.
 * - MariaDB/MySQL: `repository_search_gram(source, gram, repo_id)`, one row per distinct three-character
 *   substring of the lowered name (source 0) and of `LOWER(description)` (source 1), written by one stored
 *   procedure the triggers call.
 *
 * Both are backfilled here for the rows that exist already. Also an index on `owner_id` that serves the
 * per-owner lists ordered by id (GET /users/{username}/repos).
 */
/** SQLite: the FTS5 table of each searched column. */
const SQLITE_TABLES = [
  ['repository_name_search', 'lower_name'],
  ['repository_description_search', 'description'],
] as const;

export class RepositorySearchIndex1764500000000 implements MigrationInterface {
  name = 'RepositorySearchIndex1764500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('CREATE INDEX IDX_repository_owner_id ON repository (owner_id)');
    if (queryRunner.connection.options.type === 'better-sqlite3') await this.upSqlite(queryRunner);
    else await this.upMysql(queryRunner);
  }

  private async upSqlite(queryRunner: QueryRunner): Promise<void> {
    // Two tables, so that a name search reads only the (short) name postings, not those of descriptions.
    for (const [table, column] of SQLITE_TABLES) {
      await queryRunner.query(`CREATE VIRTUAL TABLE ${table} USING fts5(${column}, content='repository', content_rowid='id', tokenize='trigram')`);
      await queryRunner.query(
        `CREATE TRIGGER ${table}_insert AFTER INSERT ON repository BEGIN
           INSERT INTO ${table} (rowid, ${column}) VALUES (new.id, new.${column});
         END`,
      );
      // An external-content FTS5 table must be told the old value to remove it from the index.
      await queryRunner.query(
        `CREATE TRIGGER ${table}_delete AFTER DELETE ON repository BEGIN
           INSERT INTO ${table} (${table}, rowid, ${column}) VALUES ('delete', old.id, old.${column});
         END`,
      );
      await queryRunner.query(
        `CREATE TRIGGER ${table}_update AFTER UPDATE OF id, ${column} ON repository BEGIN
           INSERT INTO ${table} (${table}, rowid, ${column}) VALUES ('delete', old.id, old.${column});
           INSERT INTO ${table} (rowid, ${column}) VALUES (new.id, new.${column});
         END`,
      );
      await queryRunner.query(`INSERT INTO ${table} (${table}) VALUES ('rebuild')`);
    }
  }

  private async upMysql(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE repository_search_gram (
         source TINYINT NOT NULL,
         gram VARCHAR(3) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
         repo_id BIGINT NOT NULL,
         PRIMARY KEY (source, gram, repo_id),
         KEY IDX_repository_search_gram_repo_id (repo_id)
       ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
    );
    // One row per distinct gram (INSERT IGNORE); a text shorter than three characters has none, and the
    // search scans for queries that short. `LOWER(description)` is exactly what the search's LIKE compares.
    await queryRunner.query(
      `CREATE PROCEDURE repository_search_index(IN repo BIGINT, IN name_text LONGTEXT CHARACTER SET utf8mb4, IN description_text LONGTEXT CHARACTER SET utf8mb4)
       BEGIN
         DECLARE i INT DEFAULT 1;
         DECLARE n INT DEFAULT CHAR_LENGTH(IFNULL(name_text, ''));
         WHILE i + 2 <= n DO
           INSERT IGNORE INTO repository_search_gram (source, gram, repo_id) VALUES (0, SUBSTRING(name_text, i, 3), repo);
           SET i = i + 1;
         END WHILE;
         SET i = 1;
         SET n = CHAR_LENGTH(IFNULL(description_text, ''));
         WHILE i + 2 <= n DO
           INSERT IGNORE INTO repository_search_gram (source, gram, repo_id) VALUES (1, SUBSTRING(description_text, i, 3), repo);
           SET i = i + 1;
         END WHILE;
       END`,
    );
    await queryRunner.query(
      `CREATE TRIGGER repository_search_insert AFTER INSERT ON repository FOR EACH ROW
         CALL repository_search_index(NEW.id, NEW.lower_name, LOWER(NEW.description))`,
    );
    await queryRunner.query(
      `CREATE TRIGGER repository_search_delete AFTER DELETE ON repository FOR EACH ROW
         DELETE FROM repository_search_gram WHERE repo_id = OLD.id`,
    );
    await queryRunner.query(
      `CREATE TRIGGER repository_search_update AFTER UPDATE ON repository FOR EACH ROW
       BEGIN
         IF NOT (NEW.id <=> OLD.id AND NEW.lower_name <=> OLD.lower_name AND NEW.description <=> OLD.description) THEN
           DELETE FROM repository_search_gram WHERE repo_id = OLD.id;
           CALL repository_search_index(NEW.id, NEW.lower_name, LOWER(NEW.description));
         END IF;
       END`,
    );
    // Rows that exist already (none when the schema is created on an empty database).
    const rows: { id: number | string; lower_name: string; description: string }[] = await queryRunner.query(
      'SELECT id, lower_name, LOWER(description) AS description FROM repository',
    );
    for (const row of rows) await queryRunner.query('CALL repository_search_index(?, ?, ?)', [row.id, row.lower_name, row.description]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type === 'better-sqlite3') {
      for (const [table] of SQLITE_TABLES) {
        for (const event of ['insert', 'delete', 'update']) await queryRunner.query(`DROP TRIGGER ${table}_${event}`);
        await queryRunner.query(`DROP TABLE ${table}`);
      }
    } else {
      for (const trigger of ['repository_search_insert', 'repository_search_delete', 'repository_search_update'])
        await queryRunner.query(`DROP TRIGGER ${trigger}`);
      await queryRunner.query('DROP PROCEDURE repository_search_index');
      await queryRunner.query('DROP TABLE repository_search_gram');
    }
    await queryRunner.dropIndex('repository', 'IDX_repository_owner_id');
  }
}
