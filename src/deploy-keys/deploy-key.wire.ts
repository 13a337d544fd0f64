import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { RepositoryWire } from '../repos/repository.wire';

/** Forgejo's `DeployKey` JSON. */
@ApiSchema({ name: 'DeployKey' })
export class DeployKeyWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty({ format: 'int64', description: 'the same for every repository the key material was added to' }) key_id: number;
  @ApiProperty() key: string;
  @ApiProperty() url: string;
  @ApiProperty() title: string;
  @ApiProperty() fingerprint: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty() read_only: boolean;
  @ApiPropertyOptional({ type: () => RepositoryWire, description: 'only for a site admin or the user owning the repository' }) repository?: RepositoryWire;
}
