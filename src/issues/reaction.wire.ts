import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { UserWire } from '../users/user.wire';

/** Forgejo's `Reaction` JSON. */
@ApiSchema({ name: 'Reaction' })
export class ReactionWire {
  @ApiProperty({ type: UserWire }) user: UserWire;
  @ApiProperty() content: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}
