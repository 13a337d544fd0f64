import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/** LFS objects held by repositories, and LFS locks. Created only when missing, so a rerun does nothing. */
export class CreateLfs1796172609408 implements MigrationInterface {
  name = 'CreateLfs1796172609408';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'lfs_meta_object',
        columns: [k.id(), k.text('oid', 64), k.ref('size', { default: '0' }), k.ref('repository_id'), k.time('created_unix')],
        indices: [k.index('IDX_lfs_meta_object_repository_id_oid', ['repository_id', 'oid'], true), k.index('IDX_lfs_meta_object_oid', ['oid'])],
      }),
      true,
    );
    await queryRunner.createTable(
      new Table({
        name: 'lfs_lock',
        columns: [k.id(), k.ref('repository_id'), k.ref('owner_id'), k.longText('path'), k.text('path_key', 64), k.time('created_unix')],
        indices: [k.index('IDX_lfs_lock_repository_id_path_key', ['repository_id', 'path_key'], true)],
      }),
      true,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('lfs_lock', true);
    await queryRunner.dropTable('lfs_meta_object', true);
  }
}
