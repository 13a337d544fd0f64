import { ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';

/** Body of POST /repos/{owner}/{repo}/milestones. */
@ApiSchema({ name: 'CreateMilestoneOption' })
export class CreateMilestoneOption {
  @Field({ field: 'Title', type: 'string', maxSize: 255 })
  title?: string;

  @Field({ field: 'Description', type: 'string', description: 'at most 65 535 bytes (422 beyond)' })
  description?: string;

  @Field({ field: 'Deadline', type: 'string', description: 'date-time' })
  due_on?: string;

  @Field({ field: 'State', type: 'string', description: '`open` or `closed`; anything but `closed` is open' })
  state?: string;
}

/** Body of PATCH /repos/{owner}/{repo}/milestones/{id}: absent fields stay; the due date cannot be removed. */
@ApiSchema({ name: 'EditMilestoneOption' })
export class EditMilestoneOption {
  @Field({ field: 'Title', type: 'string', maxSize: 255 })
  title?: string;

  @Field({ field: 'Description', type: 'string', nullable: true })
  description?: string | null;

  @Field({ field: 'State', type: 'string', nullable: true, description: '`open` or `closed`' })
  state?: string | null;

  @Field({ field: 'Deadline', type: 'string', nullable: true, description: 'date-time' })
  due_on?: string | null;
}
