import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `lfs` and `lfs_endpoint` on `mirror`: whether a pull mirror's syncs fetch LFS objects, and from which LFS server
 * ('' for the one its clone address implies), as `POST /repos/migrate` asked. Added with plain ALTER TABLE; each
 * column only when it is missing, so that a run interrupted halfway can run again.
 */
export class MirrorLfs1796199137656 implements MigrationInterface {
  name = 'MirrorLfs1796199137656';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.options.type === 'better-sqlite3';
    const columns: [string, string][] = [
      ['lfs', sqlite ? 'boolean NOT NULL DEFAULT (0)' : 'tinyint NOT NULL DEFAULT 0'],
      ['lfs_endpoint', sqlite ? "varchar(2048) NOT NULL DEFAULT ('')" : "varchar(2048) NOT NULL DEFAULT ''"],
    ];
    for (const [name, type] of columns) {
      if (!(await queryRunner.hasColumn('mirror', name))) await queryRunner.query(`ALTER TABLE mirror ADD COLUMN ${name} ${type}`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const name of ['lfs_endpoint', 'lfs']) {
      if (await queryRunner.hasColumn('mirror', name)) await queryRunner.query(`ALTER TABLE mirror DROP COLUMN ${name}`);
    }
  }
}
