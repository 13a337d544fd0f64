import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/** Releases and their attachments (files in DATA_DIR/attachments). */
export class CreateReleases1764400000000 implements MigrationInterface {
  name = 'CreateReleases1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'release',
        columns: [
          k.id(),
          k.ref('repo_id'),
          k.ref('publisher_id'),
          k.text('tag_name', 255),
          k.text('target', 255),
          k.text('title', 255),
          k.longText('note'),
          k.text('sha1', 64),
          k.flag('is_draft'),
          k.flag('is_prerelease'),
          k.flag('hide_archive_links'),
          k.time('created_unix'),
        ],
        indices: [
          k.index('IDX_release_repo_id_tag_name', ['repo_id', 'tag_name'], true),
          k.index('IDX_release_repo_id_created_unix', ['repo_id', 'created_unix']),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'attachment',
        columns: [
          k.id(),
          k.text('uuid', 40),
          k.ref('repo_id'),
          k.ref('release_id'),
          k.ref('uploader_id'),
          k.text('name', 255),
          k.time('size'),
          k.counter('download_count'),
          k.time('created_unix'),
        ],
        indices: [
          k.index('IDX_attachment_uuid', ['uuid'], true),
          k.index('IDX_attachment_release_id', ['release_id']),
          k.index('IDX_attachment_repo_id', ['repo_id']),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('attachment');
    await queryRunner.dropTable('release');
  }
}
