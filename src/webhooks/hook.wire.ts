import { ApiProperty, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'Hook' })
export class HookWire {
  @ApiProperty() id: number;
  @ApiProperty() type: string;
  @ApiProperty() branch_filter: string;
  @ApiProperty() url: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) config: Record<string, string>;
  @ApiProperty({ type: [String] }) events: string[];
  @ApiProperty({ description: 'never returned: always empty' }) authorization_header: string;
  @ApiProperty() content_type: string;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: 'always null for the formats Anvil sends' }) metadata: null;
  @ApiProperty() active: boolean;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

/** One delivery of a hook as its history shows it (beyond Forgejo's API). */
@ApiSchema({ name: 'WebhookDelivery' })
export class WebhookDeliveryWire {
  @ApiProperty() uuid: string;
  @ApiProperty() hook_id: number;
  @ApiProperty() event: string;
  @ApiProperty({ description: 'pending, delivered or failed' }) status: string;
  @ApiProperty() attempts: number;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, description: 'without signatures and Authorization' }) request_headers: Record<
    string,
    string
  >;
  @ApiProperty({ description: '0 when the last attempt got no answer' }) response_status: number;
  @ApiProperty({ description: 'the first 64 KiB of the answer, or what went wrong' }) response_body: string;
  @ApiProperty() duration_ms: number;
  @ApiProperty({ format: 'date-time', nullable: true }) delivered_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true }) next_attempt_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}
