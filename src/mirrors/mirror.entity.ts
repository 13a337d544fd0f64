import { Column, Entity, Index } from 'typeorm';
import { bigintAsNumber, FlagColumn, IdColumn, LongTextColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/**
 * The pull-mirror record of a repository created by POST /repos/migrate with `mirror: true` (the repository
 * row keeps what every view shows: `mirror`, `mirror_interval`, `mirror_updated`, `original_url`).
 */
@Entity('mirror')
@Index('IDX_mirror_repo_id', ['repoId'], { unique: true })
@Index('IDX_mirror_next_update_unix', ['nextUpdateUnix'])
export class MirrorEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  repoId: number;

  /** Whole seconds; 0 = no periodic sync. */
  @Column({ type: 'bigint', transformer: bigintAsNumber, default: 0 })
  intervalSeconds: number;

  /** When the scheduler next syncs it; 0 = never. */
  @UnixTimeColumn()
  nextUpdateUnix: number;

  /** The fetch credentials sealed by SecretBox (`v1:…`), '' when there are none. Never leaves the server. */
  @LongTextColumn()
  credentials: string;

  /** Syncs fetch the LFS objects the mirrored refs point to (`lfs: true` at the migration). */
  @FlagColumn()
  lfs: boolean;

  /** The LFS server to fetch them from; '' for the one the clone address implies (`.git/info/lfs`). */
  @TextColumn(2048)
  lfsEndpoint: string;

  /** The process that holds the sync claim, '' when nobody does. */
  @TextColumn(64)
  claimedBy: string;

  /** A claim is void after this time (its process died); 0 = unclaimed. */
  @UnixTimeColumn()
  claimExpiresUnix: number;
}
