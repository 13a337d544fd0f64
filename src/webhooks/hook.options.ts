import { ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';

@ApiSchema({ name: 'CreateHookOption' })
export class CreateHookOption {
  @Field({ field: 'Type', type: 'string', required: true, description: 'forgejo, gitea or gogs' })
  type: string;

  @Field({
    field: 'Config',
    type: 'object',
    required: true,
    description: '`url` and `content_type` (json or form) required; `secret`, `http_method` (POST, or GET for forgejo and gitea hooks)',
  })
  config: Record<string, unknown>;

  @Field({ field: 'Events', type: 'strings', maxSize: 64 })
  events?: string[];

  @Field({ field: 'BranchFilter', type: 'string', maxSize: 255 })
  branch_filter?: string;

  @Field({ field: 'AuthorizationHeader', type: 'string', maxSize: 4096 })
  authorization_header?: string;

  @Field({ field: 'Active', type: 'boolean' })
  active?: boolean;
}

@ApiSchema({ name: 'EditHookOption' })
export class EditHookOption {
  @Field({ field: 'Config', type: 'object' })
  config?: Record<string, unknown>;

  @Field({ field: 'Events', type: 'strings', maxSize: 64 })
  events?: string[];

  @Field({ field: 'BranchFilter', type: 'string', maxSize: 255 })
  branch_filter?: string;

  @Field({ field: 'AuthorizationHeader', type: 'string', maxSize: 4096 })
  authorization_header?: string;

  @Field({ field: 'Active', type: 'boolean' })
  active?: boolean;
}
