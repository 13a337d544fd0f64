import { Column, Entity, Index } from 'typeorm';
import { bigintAsNumber, CounterColumn, FlagColumn, IdColumn, LongTextColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/** A release of a repository, named by its git tag (case-sensitive, as git refs are). */
@Entity('release')
@Index('IDX_release_repo_id_tag_name', ['repoId', 'tagName'], { unique: true })
@Index('IDX_release_repo_id_created_unix', ['repoId', 'createdUnix'])
export class ReleaseEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  repoId: number;

  @RefColumn()
  publisherId: number;

  @TextColumn(255)
  tagName: string;

  /** `target_commitish` as given (the default branch when none was). */
  @TextColumn(255)
  target: string;

  @TextColumn(255)
  title: string;

  @LongTextColumn()
  note: string;

  /** The commit the tag pointed at when the release was published; '' for drafts. */
  @TextColumn(64)
  sha1: string;

  @FlagColumn(false)
  isDraft: boolean;

  @FlagColumn(false)
  isPrerelease: boolean;

  @FlagColumn(false)
  hideArchiveLinks: boolean;

  @UnixTimeColumn()
  createdUnix: number;
}

/**
 * A file attached to a release; its bytes live in the blob store under `attachments/<u>/<u>/<uuid>`.
 * `repo_id` is kept so that a repository's attachments (and an owner's quota usage) are found without the release.
 */
@Entity('attachment')
@Index('IDX_attachment_uuid', ['uuid'], { unique: true })
@Index('IDX_attachment_release_id', ['releaseId'])
@Index('IDX_attachment_repo_id', ['repoId'])
export class AttachmentEntity {
  @IdColumn()
  id: number;

  @TextColumn(40)
  uuid: string;

  @RefColumn()
  repoId: number;

  @RefColumn()
  releaseId: number;

  @RefColumn()
  uploaderId: number;

  @TextColumn(255)
  name: string;

  @Column({ type: 'bigint', transformer: bigintAsNumber, default: 0 })
  size: number;

  @CounterColumn()
  downloadCount: number;

  @UnixTimeColumn()
  createdUnix: number;

  /** Set for an external asset (Forgejo's `type: "external"`): a link the uploader gave; no file, size 0. */
  @TextColumn(2048)
  externalUrl: string;
}
