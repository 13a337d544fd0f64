import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/** Packages, their versions and files, and the content-addressed blobs the files share. */
export class CreatePackages1764400100000 implements MigrationInterface {
  name = 'CreatePackages1764400100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'package',
        columns: [k.id(), k.ref('owner_id'), k.text('type', 32), k.text('name', 255), k.text('lower_name', 255), k.time('created_unix')],
        indices: [k.index('IDX_package_owner_id_type_lower_name', ['owner_id', 'type', 'lower_name'], true)],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'package_version',
        columns: [k.id(), k.ref('package_id'), k.ref('creator_id'), k.text('version', 255), k.text('lower_version', 255), k.time('created_unix')],
        indices: [k.index('IDX_package_version_package_id_lower_version', ['package_id', 'lower_version'], true)],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'package_file',
        columns: [k.id(), k.ref('version_id'), k.ref('blob_id'), k.text('name', 255), k.text('lower_name', 255), k.time('created_unix')],
        indices: [k.index('IDX_package_file_version_id_lower_name', ['version_id', 'lower_name'], true), k.index('IDX_package_file_blob_id', ['blob_id'])],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'package_blob',
        columns: [k.id(), k.time('size'), k.text('md5', 32), k.text('sha1', 40), k.text('sha256', 64), k.text('sha512', 128), k.time('created_unix')],
        indices: [k.index('IDX_package_blob_sha256', ['sha256'], true)],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('package_blob');
    await queryRunner.dropTable('package_file');
    await queryRunner.dropTable('package_version');
    await queryRunner.dropTable('package');
  }
}
