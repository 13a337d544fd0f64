import { Entity, Index } from 'typeorm';
import { FlagColumn, IdColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/**
 * A label of a repository (`repoId`, `orgId` 0) or of an organisation (`orgId`, `repoId` 0), for the issue
 * tracker to come. Names are unique per repository and per organisation.
 */
@Entity('label')
@Index('IDX_label_repo_id_org_id_name', ['repoId', 'orgId', 'name'], { unique: true })
@Index('IDX_label_org_id', ['orgId'])
export class LabelEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  repoId: number;

  @RefColumn()
  orgId: number;

  @TextColumn(255)
  name: string;

  /** `#rrggbb`, lower-case. */
  @TextColumn(7)
  color: string;

  @TextColumn(2048)
  description: string;

  @FlagColumn(false)
  exclusive: boolean;

  /** When it was archived; 0 when not archived. */
  @UnixTimeColumn()
  archivedUnix: number;

  @UnixTimeColumn()
  createdUnix: number;

  @UnixTimeColumn()
  updatedUnix: number;
}
