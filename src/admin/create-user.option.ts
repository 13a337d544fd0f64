import { ApiSchema } from '@nestjs/swagger';
import { EMAIL, Field } from '../common/fields';
import { USERNAME } from '../users/user-names';

@ApiSchema({ name: 'CreateUserOption' })
export class CreateUserOption {
  @Field({ field: 'Username', type: 'string', required: true, maxSize: 40, rules: [USERNAME] })
  username: string;

  @Field({ field: 'Email', type: 'string', required: true, maxSize: 254, rules: [EMAIL] })
  email: string;

  @Field({ field: 'Password', type: 'string', maxSize: 255 })
  password?: string;

  @Field({ field: 'FullName', type: 'string', maxSize: 100 })
  full_name?: string;

  @Field({ field: 'MustChangePassword', type: 'boolean', description: 'defaults to true' })
  must_change_password?: boolean;

  @Field({ field: 'Restricted', type: 'boolean' })
  restricted?: boolean;

  @Field({ field: 'Visibility', type: 'string', in: ['public', 'limited', 'private'] })
  visibility?: string;

  @Field({ field: 'CreatedAt', type: 'string', description: 'overrides the creation time (RFC 3339)' })
  created_at?: string;

  @Field({ field: 'SendNotify', type: 'boolean', description: 'ignored: Anvil sends no mail' })
  send_notify?: boolean;

  @Field({ field: 'LoginName', type: 'string', description: 'ignored: Anvil has no auth sources' })
  login_name?: string;

  @Field({ field: 'SourceID', type: 'integer', description: 'ignored: Anvil has no auth sources' })
  source_id?: number;
}
