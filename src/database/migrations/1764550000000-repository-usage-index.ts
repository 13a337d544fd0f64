import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Quota usage sums a target's repository sizes split public/private on every quota check (quota-usage.store.ts).
 * With `(owner_id, is_private, git_size)` that sum reads the index alone, already grouped, instead of every
 * repository row of the owner.
 */
export class RepositoryUsageIndex1764550000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('CREATE INDEX IDX_repository_owner_private_size ON repository (owner_id, is_private, git_size)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('repository', 'IDX_repository_owner_private_size');
  }
}
