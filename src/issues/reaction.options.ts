import { ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';

/** Body of POST and DELETE …/reactions. */
@ApiSchema({ name: 'EditReactionOption' })
export class EditReactionOption {
  @Field({ field: 'Reaction', type: 'string', maxSize: 64, description: 'one of +1, -1, laugh, hooray, confused, heart, rocket, eyes' })
  content?: string;
}
