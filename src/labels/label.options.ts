import { ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';

/** Body of POST /repos/{owner}/{repo}/labels and POST /orgs/{org}/labels. */
@ApiSchema({ name: 'CreateLabelOption' })
export class CreateLabelOption {
  @Field({ field: 'Name', type: 'string', required: true, maxSize: 255, description: 'unique per repository or organisation (409)' })
  name: string;

  @Field({ field: 'Exclusive', type: 'boolean' })
  exclusive?: boolean;

  @Field({ field: 'Color', type: 'string', required: true, maxSize: 16, description: '6 (or 3) hex digits, with or without #', example: '#00aabb' })
  color: string;

  @Field({ field: 'Description', type: 'string', maxSize: 2048 })
  description?: string;

  @Field({ field: 'IsArchived', type: 'boolean' })
  is_archived?: boolean;
}

/** Body of PATCH .../labels/{id}: absent fields stay, except `is_archived`, which (as Forgejo) is false when absent. */
@ApiSchema({ name: 'EditLabelOption' })
export class EditLabelOption {
  @Field({ field: 'Name', type: 'string', maxSize: 255 })
  name?: string;

  @Field({ field: 'Exclusive', type: 'boolean' })
  exclusive?: boolean;

  @Field({ field: 'Color', type: 'string', maxSize: 16, example: '#00aabb' })
  color?: string;

  @Field({ field: 'Description', type: 'string', maxSize: 2048 })
  description?: string;

  @Field({ field: 'IsArchived', type: 'boolean' })
  is_archived?: boolean;
}
