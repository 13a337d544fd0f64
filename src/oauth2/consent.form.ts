import { Field } from '../common/fields';

/** The fields of the OAuth2 sign-in and consent form (application/x-www-form-urlencoded). */
export class ConsentForm {
  @Field({ field: 'Decision', type: 'string', required: true, in: ['authorize', 'deny'] })
  decision: 'authorize' | 'deny';

  @Field({ field: 'UserName', type: 'string', maxSize: 255 })
  user_name?: string;

  @Field({ field: 'Password', type: 'string', maxSize: 255 })
  password?: string;

  @Field({ field: 'Csrf', type: 'string', maxSize: 512 })
  _csrf?: string;
}
