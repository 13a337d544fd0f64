import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { RepositoryWire } from '../repos/repository.wire';
import { UserWire } from '../users/user.wire';

@ApiSchema({ name: 'CommitStatus' })
export class CommitStatusWire {
  @ApiProperty() id: number;
  @ApiProperty({ enum: ['pending', 'success', 'error', 'failure', 'warning'] }) status: string;
  @ApiProperty() target_url: string;
  @ApiProperty() description: string;
  @ApiProperty() url: string;
  @ApiProperty() context: string;
  @ApiProperty({ type: UserWire, nullable: true }) creator: UserWire | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

@ApiSchema({ name: 'CombinedStatus' })
export class CombinedStatusWire {
  @ApiProperty() state: string;
  @ApiProperty() sha: string;
  @ApiProperty() total_count: number;
  @ApiProperty({ type: [CommitStatusWire], nullable: true }) statuses: CommitStatusWire[] | null;
  @ApiProperty({ type: RepositoryWire, nullable: true }) repository: RepositoryWire | null;
  @ApiProperty() commit_url: string;
  @ApiProperty() url: string;
}
