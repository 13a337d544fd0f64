import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { UserWire } from '../users/user.wire';

/** Forgejo's `Comment` JSON. */
@ApiSchema({ name: 'Comment' })
export class CommentWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty() html_url: string;
  @ApiProperty({ description: '"" for a comment on an issue' }) pull_request_url: string;
  @ApiProperty({ description: 'the issue’s page; "" for a comment on a pull request' }) issue_url: string;
  @ApiProperty({ type: UserWire }) user: UserWire;
  @ApiProperty() original_author: string;
  @ApiProperty({ format: 'int64' }) original_author_id: number;
  @ApiProperty() body: string;
  @ApiProperty({ type: [Object], description: 'always empty: comments carry no attachments yet' }) assets: unknown[];
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}
