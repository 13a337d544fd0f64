import { ApiProperty, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'AuditEventActor' })
export class AuditEventActorWire {
  @ApiProperty({ description: 'user id; 0 for the command line or an anonymous caller' })
  id!: number;
  @ApiProperty({ description: "the user's login, `cli` for the admin command line, empty when anonymous" })
  login!: string;
}

@ApiSchema({ name: 'AuditEventTarget' })
export class AuditEventTargetWire {
  @ApiProperty({ example: 'repository' })
  type!: string;
  @ApiProperty({ description: '0 when the target has no id (a name that was tried)' })
  id!: number;
  @ApiProperty({ example: 'alice/tools' })
  name!: string;
}

/** One audit event, as GET /admin/audit lists it. */
@ApiSchema({ name: 'AuditEvent' })
export class AuditEventWire {
  @ApiProperty()
  id!: number;
  @ApiProperty({ example: 'repository.create' })
  action!: string;
  @ApiProperty({ enum: ['success', 'failure'] })
  outcome!: string;
  @ApiProperty({ type: AuditEventActorWire })
  actor!: AuditEventActorWire;
  @ApiProperty({ description: 'the client address (behind trusted proxies, the forwarded one); `local` for the command line' })
  address!: string;
  @ApiProperty({ type: AuditEventTargetWire })
  target!: AuditEventTargetWire;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'non-secret facts: the carrier of a sign-in, the fields changed' })
  detail!: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' })
  created!: string;
}
