import { Entity, Index } from 'typeorm';
import { IdColumn, RefColumn, UnixTimeColumn } from '../database/columns';

/** Issue `issueId` depends on (is blocked by) issue `dependencyId`, possibly of another repository. */
@Entity('issue_dependency')
@Index('IDX_issue_dependency_issue_id_dependency_id', ['issueId', 'dependencyId'], { unique: true })
@Index('IDX_issue_dependency_dependency_id', ['dependencyId'])
export class IssueDependencyEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  issueId: number;

  @RefColumn()
  dependencyId: number;

  @UnixTimeColumn()
  createdUnix: number;
}
