import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/** Repositories, stars and watches. */
export class CreateRepositories1763700300000 implements MigrationInterface {
  name = 'CreateRepositories1763700300000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'repository',
        columns: [
          k.id(),
          k.ref('owner_id'),
          k.text('lower_name', 100),
          k.text('name', 100),
          k.text('description', 2048),
          k.text('website', 2048),
          k.text('original_url', 2048),
          k.text('default_branch', 255),
          k.text('object_format_name', 16),
          k.flag('is_private'),
          k.flag('is_empty', true),
          k.flag('is_template'),
          k.flag('is_mirror'),
          k.text('mirror_interval', 32),
          k.time('mirror_updated_unix'),
          k.counter('num_stars'),
          k.counter('num_watches'),
          // A byte count, 64-bit like the time columns.
          k.ref('git_size', { default: '0' }),
          k.time('created_unix'),
          k.time('updated_unix'),
        ],
        indices: [
          k.index('IDX_repository_owner_id_lower_name', ['owner_id', 'lower_name'], true),
          k.index('IDX_repository_lower_name', ['lower_name']),
          k.index('IDX_repository_created_unix', ['created_unix']),
          k.index('IDX_repository_updated_unix', ['updated_unix']),
          k.index('IDX_repository_num_stars', ['num_stars']),
          k.index('IDX_repository_git_size', ['git_size']),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'star',
        columns: [k.id(), k.ref('uid'), k.ref('repo_id'), k.time('created_unix')],
        indices: [k.index('IDX_star_uid_repo_id', ['uid', 'repo_id'], true), k.index('IDX_star_repo_id', ['repo_id'])],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'watch',
        columns: [k.id(), k.ref('uid'), k.ref('repo_id'), k.time('created_unix')],
        indices: [k.index('IDX_watch_uid_repo_id', ['uid', 'repo_id'], true), k.index('IDX_watch_repo_id', ['repo_id'])],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['watch', 'star', 'repository']) await queryRunner.dropTable(table);
  }
}
