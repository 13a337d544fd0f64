import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `repository_usage`: per owner (user or organisation), the sum of its repositories' stored git sizes, public
 * and private apart, kept by database triggers in the same transaction as every repository write (a row
 * inserted or deleted; its owner, privacy or size changed), whoever writes it: Anvil's stores or SQL from
 * outside. A quota check reads one row by primary key instead of summing all of an owner's repositories
 * (quota-usage.store.ts). A user or organisation row brings its usage row and takes it away.
 */
export class RepositoryUsageTotals1764560000000 implements MigrationInterface {
  name = 'RepositoryUsageTotals1764560000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.options.type === 'better-sqlite3';
    const user = queryRunner.connection.driver.escape('user');
    await queryRunner.query(
      sqlite
        ? 'CREATE TABLE repository_usage (owner_id integer PRIMARY KEY NOT NULL, public_bytes bigint NOT NULL DEFAULT 0, private_bytes bigint NOT NULL DEFAULT 0)'
        : 'CREATE TABLE repository_usage (owner_id bigint NOT NULL PRIMARY KEY, public_bytes bigint NOT NULL DEFAULT 0, private_bytes bigint NOT NULL DEFAULT 0) ENGINE=InnoDB',
    );
    await queryRunner.query(
      `INSERT INTO repository_usage (owner_id, public_bytes, private_bytes)
       SELECT u.id,
              COALESCE((SELECT SUM(r.git_size) FROM repository r WHERE r.owner_id = u.id AND r.is_private = 0), 0),
              COALESCE((SELECT SUM(r.git_size) FROM repository r WHERE r.owner_id = u.id AND r.is_private <> 0), 0)
       FROM ${user} u`,
    );
    const add = (row: 'NEW' | 'OLD', sign: '+' | '-') =>
      `UPDATE repository_usage SET public_bytes = public_bytes ${sign} CASE WHEN ${row}.is_private = 0 THEN COALESCE(${row}.git_size, 0) ELSE 0 END, ` +
      `private_bytes = private_bytes ${sign} CASE WHEN ${row}.is_private = 0 THEN 0 ELSE COALESCE(${row}.git_size, 0) END WHERE owner_id = ${row}.owner_id`;
    const triggers: [string, string, string, string[]][] = [
      ['user_usage_insert', `AFTER INSERT ON ${user}`, 'INSERT INTO repository_usage (owner_id, public_bytes, private_bytes) VALUES (NEW.id, 0, 0)', []],
      ['user_usage_delete', `AFTER DELETE ON ${user}`, 'DELETE FROM repository_usage WHERE owner_id = OLD.id', []],
      ['repository_usage_insert', 'AFTER INSERT ON repository', add('NEW', '+'), []],
      ['repository_usage_delete', 'AFTER DELETE ON repository', add('OLD', '-'), []],
      ['repository_usage_update', 'AFTER UPDATE ON repository', `${add('OLD', '-')}; ${add('NEW', '+')}`, ['owner_id', 'is_private', 'git_size']],
    ];
    for (const [name, when, body, columns] of triggers) {
      if (sqlite) {
        const on = columns.length > 0 ? when.replace('AFTER UPDATE ON', `AFTER UPDATE OF ${columns.join(', ')} ON`) : when;
        await queryRunner.query(`CREATE TRIGGER ${name} ${on} BEGIN ${body}; END`);
      } else if (columns.length > 0) {
        const changed = columns.map((column) => `NEW.${column} <=> OLD.${column}`).join(' AND ');
        await queryRunner.query(`CREATE TRIGGER ${name} ${when} FOR EACH ROW IF NOT (${changed}) THEN ${body}; END IF`);
      } else {
        await queryRunner.query(`CREATE TRIGGER ${name} ${when} FOR EACH ROW ${body}`);
      }
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const name of ['user_usage_insert', 'user_usage_delete', 'repository_usage_insert', 'repository_usage_delete', 'repository_usage_update']) {
      await queryRunner.query(`DROP TRIGGER ${name}`);
    }
    await queryRunner.query('DROP TABLE repository_usage');
  }
}
