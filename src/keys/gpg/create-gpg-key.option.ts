import { ApiSchema } from '@nestjs/swagger';
import { Field } from '../../common/fields';

/** Body of POST /user/gpg_keys. */
@ApiSchema({ name: 'CreateGPGKeyOption' })
export class CreateGpgKeyOption {
  @Field({ field: 'ArmoredKey', type: 'string', required: true, description: 'An armored GPG key to add' })
  armored_public_key: string;

  @Field({ field: 'Signature', type: 'string', description: 'A detached armored signature over the verification token' })
  armored_signature?: string;
}
