import { ApiSchema } from '@nestjs/swagger';
import { Field } from '../../common/fields';

/** Body of POST /user/keys. */
@ApiSchema({ name: 'CreateKeyOption' })
export class CreateKeyOption {
  @Field({ field: 'Title', type: 'string', required: true, maxSize: 50, description: 'Title of the key to add' })
  title: string;

  @Field({ field: 'Key', type: 'string', required: true, description: 'An armored SSH key to add' })
  key: string;

  /** Deploy keys only (read-only unless false); user keys are never read-only and ignore it. */
  @Field({ field: 'ReadOnly', type: 'boolean', description: 'Describe if the key has only read access or read/write' })
  read_only?: boolean;
}
