import { Column, Entity, Index } from 'typeorm';
import { bigintAsNumber, IdColumn, RefColumn, TextColumn } from '../database/columns';

/** Bytes of one language in a repository, measured at `commitId` of its default branch. */
@Entity('language_stat')
@Index('IDX_language_stat_repo_id_language', ['repoId', 'language'], { unique: true })
export class LanguageStatEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  repoId: number;

  @TextColumn(64)
  commitId: string;

  @TextColumn(50)
  language: string;

  @Column({ type: 'bigint', transformer: bigintAsNumber, default: 0 })
  size: number;
}
