import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * On MySQL/MariaDB `user_search_gram.gram` compares as bytes, as on SQLite and as `repository_search_gram`
 * already does. Under the table's default `utf8mb4_general_ci`, `jur` and `jür` are one key, so a user whose
 * login and full name give both (`jurgen`, "Jürgen") could not be created or renamed: the second gram broke the
 * primary key. The grams are lowered before they are stored, so byte order is the search's order. Keys unique
 * under the old collation stay unique under the new one, so the change cannot fail on existing rows.
 */
export class UserSearchGramBinary1796400000000 implements MigrationInterface {
  name = 'UserSearchGramBinary1796400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type !== 'mysql') return;
    await queryRunner.query('ALTER TABLE user_search_gram MODIFY gram VARCHAR(3) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type !== 'mysql') return;
    await queryRunner.query('ALTER TABLE user_search_gram MODIFY gram VARCHAR(3) NOT NULL');
  }
}
