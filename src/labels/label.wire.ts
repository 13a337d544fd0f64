import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** Forgejo's `Label` JSON. */
@ApiSchema({ name: 'Label' })
export class LabelWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty() name: string;
  @ApiProperty() exclusive: boolean;
  @ApiProperty() is_archived: boolean;
  @ApiProperty({ example: '00aabb', description: 'six hex digits, without #' }) color: string;
  @ApiProperty() description: string;
  @ApiProperty() url: string;
}
