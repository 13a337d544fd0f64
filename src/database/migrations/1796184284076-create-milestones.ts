import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/**
 * Milestones of repositories, with the counts of their issues, and the index that finds a milestone's issues
 * when it is deleted. Each step first looks whether it already happened, so a rerun does no harm.
 */
export class CreateMilestones1796184284076 implements MigrationInterface {
  name = 'CreateMilestones1796184284076';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    const issue = await queryRunner.getTable('issue');
    if (issue && !issue.indices.some((index) => index.name === 'IDX_issue_milestone_id'))
      await queryRunner.query('CREATE INDEX IDX_issue_milestone_id ON issue (milestone_id)');
    if (await queryRunner.hasTable('milestone')) return;
    await queryRunner.createTable(
      new Table({
        name: 'milestone',
        columns: [
          k.id(),
          k.ref('repo_id'),
          k.text('name', 255),
          k.longText('content'),
          k.flag('is_closed'),
          k.counter('num_issues'),
          k.counter('num_closed_issues'),
          k.time('deadline_unix'),
          k.time('created_unix'),
          k.time('updated_unix'),
          k.time('closed_unix'),
        ],
        indices: [k.index('IDX_milestone_repo_id_is_closed', ['repo_id', 'is_closed']), k.index('IDX_milestone_name', ['name'])],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('milestone');
    await queryRunner.dropIndex('issue', 'IDX_issue_milestone_id');
  }
}
