import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { RepositoryWire } from '../repos/repository.wire';
import { UserWire } from '../users/user.wire';

/** `Package` (Forgejo's API v1): one version of a package. */
@ApiSchema({ name: 'Package' })
export class PackageWire {
  @ApiProperty({ type: 'integer', format: 'int64' }) id: number;
  @ApiProperty({ type: UserWire }) owner: UserWire;
  @ApiProperty({ type: RepositoryWire, nullable: true, description: 'always null: Anvil does not link packages to repositories' }) repository: null;
  @ApiProperty({ type: UserWire }) creator: UserWire;
  @ApiProperty() type: string;
  @ApiProperty() name: string;
  @ApiProperty() version: string;
  @ApiProperty() html_url: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

/** `PackageFile` (Forgejo's API v1; `Size` is capitalised there). */
@ApiSchema({ name: 'PackageFile' })
export class PackageFileWire {
  @ApiProperty({ type: 'integer', format: 'int64' }) id: number;
  @ApiProperty({ type: 'integer', format: 'int64' }) Size: number;
  @ApiProperty() name: string;
  @ApiProperty() md5: string;
  @ApiProperty() sha1: string;
  @ApiProperty() sha256: string;
  @ApiProperty() sha512: string;
}
