import { Field } from '../common/fields';

/** The fields of the change-password form (application/x-www-form-urlencoded). */
export class ChangePasswordForm {
  @Field({ field: 'UserName', type: 'string', required: true, maxSize: 255 })
  user_name: string;

  @Field({ field: 'OldPassword', type: 'string', required: true, maxSize: 255 })
  old_password: string;

  @Field({ field: 'Password', type: 'string', required: true, maxSize: 255 })
  password: string;

  @Field({ field: 'Retype', type: 'string', required: true, maxSize: 255 })
  retype: string;

  @Field({ field: 'Csrf', type: 'string', maxSize: 512 })
  _csrf?: string;
}
