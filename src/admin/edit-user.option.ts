import { ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';

@ApiSchema({ name: 'EditUserOption' })
export class EditUserOption {
  @Field({ field: 'Email', type: 'string', maxSize: 254 }) email?: string;
  @Field({ field: 'FullName', type: 'string', maxSize: 100 }) full_name?: string;
  @Field({ field: 'Password', type: 'string', maxSize: 255 }) password?: string;
  @Field({ field: 'Website', type: 'string', maxSize: 255 }) website?: string;
  @Field({ field: 'Location', type: 'string', maxSize: 255 }) location?: string;
  @Field({ field: 'Description', type: 'string', maxSize: 255 }) description?: string;
  @Field({ field: 'Visibility', type: 'string', in: ['public', 'limited', 'private'] }) visibility?: string;
  @Field({ field: 'MustChangePassword', type: 'boolean' }) must_change_password?: boolean;
  @Field({ field: 'Active', type: 'boolean' }) active?: boolean;
  @Field({ field: 'Admin', type: 'boolean' }) admin?: boolean;
  @Field({ field: 'ProhibitLogin', type: 'boolean' }) prohibit_login?: boolean;
  @Field({ field: 'Restricted', type: 'boolean' }) restricted?: boolean;
  @Field({ field: 'AllowCreateOrganization', type: 'boolean' }) allow_create_organization?: boolean;
  @Field({ field: 'HideEmail', type: 'boolean' }) hide_email?: boolean;
}
