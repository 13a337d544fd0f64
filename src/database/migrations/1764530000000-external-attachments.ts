import { MigrationInterface, QueryRunner, TableColumn } from 'typeorm';
import { migrationKit } from '../migration-kit';

/** External release assets (Forgejo's `external_url`): a link instead of a stored file. */
export class ExternalAttachments1764530000000 implements MigrationInterface {
  name = 'ExternalAttachments1764530000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('attachment', new TableColumn(migrationKit(queryRunner).text('external_url', 2048)));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('attachment', 'external_url');
  }
}
