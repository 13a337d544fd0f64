import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `repository_search_generation`: one row whose number database triggers raise, in the same transaction, on
 * every write that can change which repositories a search counts: a repository inserted or deleted, or its
 * owner, name, description, private, template or mirror flag changed; a user inserted or deleted, or their
 * name or visibility changed. (Counters, sizes and times are not filtered on: a star does not raise it.)
 * RepositoryStore keeps the exact totals of keyword searches keyed by this number (repository-count-cache.ts),
 * so a total is reused only while nothing it depends on was written, by Anvil or by SQL from outside.
 */
export class RepositorySearchGeneration1764500100000 implements MigrationInterface {
  name = 'RepositorySearchGeneration1764500100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.options.type === 'better-sqlite3';
    const user = queryRunner.connection.driver.escape('user');
    const bump = 'UPDATE repository_search_generation SET generation = generation + 1 WHERE id = 1';
    if (sqlite) {
      await queryRunner.query('CREATE TABLE repository_search_generation (id integer PRIMARY KEY NOT NULL, generation integer NOT NULL)');
    } else {
      await queryRunner.query('CREATE TABLE repository_search_generation (id int NOT NULL PRIMARY KEY, generation bigint NOT NULL) ENGINE=InnoDB');
    }
    await queryRunner.query('INSERT INTO repository_search_generation (id, generation) VALUES (1, 0)');
    const repositoryColumns = ['id', 'owner_id', 'lower_name', 'description', 'is_private', 'is_template', 'is_mirror'];
    const userColumns = ['id', 'lower_name', 'visibility'];
    for (const [table, name, columns] of [
      ['repository', 'repository_search_generation', repositoryColumns],
      [user, 'user_search_generation', userColumns],
    ] as const) {
      for (const event of ['INSERT', 'DELETE']) {
        await queryRunner.query(
          sqlite
            ? `CREATE TRIGGER ${name}_${event.toLowerCase()} AFTER ${event} ON ${table} BEGIN ${bump}; END`
            : `CREATE TRIGGER ${name}_${event.toLowerCase()} AFTER ${event} ON ${table} FOR EACH ROW ${bump}`,
        );
      }
      await queryRunner.query(
        sqlite
          ? `CREATE TRIGGER ${name}_update AFTER UPDATE OF ${columns.join(', ')} ON ${table} BEGIN ${bump}; END`
          : `CREATE TRIGGER ${name}_update AFTER UPDATE ON ${table} FOR EACH ROW
             IF NOT (${columns.map((column) => `NEW.${column} <=> OLD.${column}`).join(' AND ')}) THEN ${bump}; END IF`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const name of ['repository_search_generation', 'user_search_generation']) {
      for (const event of ['insert', 'delete', 'update']) await queryRunner.query(`DROP TRIGGER ${name}_${event}`);
    }
    await queryRunner.query('DROP TABLE repository_search_generation');
  }
}
