import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** Forgejo's `Milestone` JSON. */
@ApiSchema({ name: 'Milestone' })
export class MilestoneWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty() title: string;
  @ApiProperty() description: string;
  @ApiProperty({ enum: ['open', 'closed'] }) state: 'open' | 'closed';
  @ApiProperty({ format: 'int64' }) open_issues: number;
  @ApiProperty({ format: 'int64' }) closed_issues: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time', nullable: true }) updated_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true }) closed_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true }) due_on: string | null;
}
