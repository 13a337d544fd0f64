import { ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';

export const COMMIT_STATUS_STATES = ['pending', 'success', 'error', 'failure', 'warning'] as const;

@ApiSchema({ name: 'CreateStatusOption' })
export class CreateStatusOption {
  @Field({ field: 'State', type: 'string', in: COMMIT_STATUS_STATES, description: 'pending, success, error, failure or warning' })
  state?: string;

  @Field({ field: 'TargetURL', type: 'string', maxSize: 2048 })
  target_url?: string;

  @Field({ field: 'Description', type: 'string', maxSize: 1024 })
  description?: string;

  @Field({ field: 'Context', type: 'string', maxSize: 255 })
  context?: string;
}
