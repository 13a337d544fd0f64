import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';

@ApiSchema({ name: 'CreateAccessTokenOption' })
export class CreateAccessTokenOption {
  @Field({ field: 'Name', type: 'string', required: true, maxSize: 255 })
  name: string;

  @Field({ field: 'Scopes', type: 'strings', example: ['read:user', 'write:repository'] })
  scopes?: string[];

  /** Repository-limited tokens are not supported: anything but null is a 400. */
  @ApiProperty({ nullable: true, required: false, type: [Object], example: null })
  repositories?: unknown;
}
