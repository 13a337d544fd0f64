import { Column, Entity, Index } from 'typeorm';
import { bigintAsNumber, IdColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/** A package of an owner (user or organisation); names are unique per owner and type, case-insensitively. */
@Entity('package')
@Index('IDX_package_owner_id_type_lower_name', ['ownerId', 'type', 'lowerName'], { unique: true })
export class PackageEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  ownerId: number;

  /** `generic` is the only type Anvil serves. */
  @TextColumn(32)
  type: string;

  @TextColumn(255)
  name: string;

  @TextColumn(255)
  lowerName: string;

  @UnixTimeColumn()
  createdUnix: number;
}

@Entity('package_version')
@Index('IDX_package_version_package_id_lower_version', ['packageId', 'lowerVersion'], { unique: true })
export class PackageVersionEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  packageId: number;

  @RefColumn()
  creatorId: number;

  @TextColumn(255)
  version: string;

  @TextColumn(255)
  lowerVersion: string;

  @UnixTimeColumn()
  createdUnix: number;
}

/** A file of a package version; its bytes are a shared blob. */
@Entity('package_file')
@Index('IDX_package_file_version_id_lower_name', ['versionId', 'lowerName'], { unique: true })
@Index('IDX_package_file_blob_id', ['blobId'])
export class PackageFileEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  versionId: number;

  @RefColumn()
  blobId: number;

  @TextColumn(255)
  name: string;

  @TextColumn(255)
  lowerName: string;

  @UnixTimeColumn()
  createdUnix: number;
}

/** Content stored once by SHA-256 (two files with the same bytes share it), under `packages/<s>/<s>/<sha256>`. */
@Entity('package_blob')
@Index('IDX_package_blob_sha256', ['sha256'], { unique: true })
export class PackageBlobEntity {
  @IdColumn()
  id: number;

  @Column({ type: 'bigint', transformer: bigintAsNumber, default: 0 })
  size: number;

  @TextColumn(32)
  md5: string;

  @TextColumn(40)
  sha1: string;

  @TextColumn(64)
  sha256: string;

  @TextColumn(128)
  sha512: string;

  @UnixTimeColumn()
  createdUnix: number;
}
