import { MigrationInterface, QueryRunner, Table, TableColumn, TableIndex } from 'typeorm';
import { migrationKit } from '../migration-kit';

/**
 * The follow graph, the user search index (user_search_gram / user_search_text, see users/user-search.grams.ts),
 * the organisation flag `repo_admin_change_team_access`, and an index for the update-time sorts of the search.
 */
export class FollowsAndUserSearch1763700200000 implements MigrationInterface {
  name = 'FollowsAndUserSearch1763700200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    await queryRunner.addColumn('user', new TableColumn(k.flag('repo_admin_change_team_access')));
    await queryRunner.createIndex('user', new TableIndex(k.index('IDX_user_type_updated', ['type', 'updated_unix'])));
    await queryRunner.createTable(
      new Table({
        name: 'follow',
        columns: [k.id(), k.ref('user_id'), k.ref('follow_id'), k.time('created_unix')],
        indices: [k.index('IDX_follow_user_id_follow_id', ['user_id', 'follow_id'], true), k.index('IDX_follow_follow_id_user_id', ['follow_id', 'user_id'])],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'user_search_gram',
        columns: [{ name: 'gram', type: 'varchar', length: '3', isPrimary: true }, k.ref('user_id', { isPrimary: true })],
        indices: [k.index('IDX_user_search_gram_user_id', ['user_id'])],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'user_search_text',
        columns: [k.ref('user_id', { isPrimary: true }), k.longText('full_name'), k.longText('email')],
      }),
    );
    await this.indexExistingUsers(queryRunner);
  }

  /** Users created before this migration get their search rows (the same computation as UserStore's). */
  private async indexExistingUsers(queryRunner: QueryRunner): Promise<void> {
    const user = queryRunner.connection.driver.escape('user');
    const rows: { id: number | string; lower_name: string; full_name: string; email: string }[] = await queryRunner.query(
      `SELECT id, lower_name, full_name, email FROM ${user} WHERE type = 0`,
    );
    for (const row of rows) {
      const id = Number(row.id);
      await queryRunner.query('INSERT INTO user_search_text (user_id, full_name, email) VALUES (?, ?, ?)', [
        id,
        lowerForSearch(row.full_name),
        lowerForSearch(row.email),
      ]);
      for (const gram of searchGrams([row.lower_name, row.full_name, row.email])) {
        await queryRunner.query('INSERT INTO user_search_gram (gram, user_id) VALUES (?, ?)', [gram, id]);
      }
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('user_search_text');
    await queryRunner.dropTable('user_search_gram');
    await queryRunner.dropTable('follow');
    await queryRunner.dropIndex('user', 'IDX_user_type_updated');
    await queryRunner.dropColumn('user', 'repo_admin_change_team_access');
  }
}

// The gram formula of users/user-search.grams.ts as it stood when this migration was written. A migration keeps
// its own copy, so that it does today what it did then and the database layer needs nothing of the users module;
// a later change of the formula re-indexes the users in a migration of its own.
const GRAM_LENGTH = 3;
const GAP = '\u2423';

function lowerForSearch(text: string): string {
  return text.toLowerCase();
}

function gramCharacters(text: string): string[] {
  return Array.from(lowerForSearch(text).replace(/[\s\u0000-\u001f\u007f]/gu, GAP));
}

function searchGrams(fields: readonly string[]): string[] {
  const grams = new Set<string>();
  for (const field of fields) {
    const characters = gramCharacters(field);
    for (let i = 0; i < characters.length; i++) grams.add(characters.slice(i, i + GRAM_LENGTH).join(''));
  }
  for (const field of fields) for (const character of gramCharacters(field)) grams.add(character);
  return [...grams];
}
