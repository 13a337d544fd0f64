import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The search generation (1764500100000) also rises when a grant that a signed-in caller's search counts
 * changes: a collaboration, a team membership or a team's repository link inserted or deleted. With it, the
 * totals of searches by collaborators and team members are kept like everyone else's (repository-count-cache.ts)
 * instead of being counted again on every page.
 */
export class SearchGenerationGrants1795716000000 implements MigrationInterface {
  name = 'SearchGenerationGrants1795716000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.options.type === 'better-sqlite3';
    const bump = 'UPDATE repository_search_generation SET generation = generation + 1 WHERE id = 1';
    for (const table of GRANT_TABLES) {
      for (const event of ['INSERT', 'DELETE']) {
        const name = `${table}_search_generation_${event.toLowerCase()}`;
        await queryRunner.query(
          sqlite
            ? `CREATE TRIGGER IF NOT EXISTS ${name} AFTER ${event} ON ${table} BEGIN ${bump}; END`
            : `CREATE TRIGGER IF NOT EXISTS ${name} AFTER ${event} ON ${table} FOR EACH ROW ${bump}`,
        );
      }
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of GRANT_TABLES) {
      for (const event of ['insert', 'delete']) await queryRunner.query(`DROP TRIGGER IF EXISTS ${table}_search_generation_${event}`);
    }
  }
}

const GRANT_TABLES = ['collaboration', 'team_user', 'team_repo'];
