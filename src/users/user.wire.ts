import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** The `User` JSON. Field order follows Forgejo's; `username` is emitted last. */
@ApiSchema({ name: 'User' })
export class UserWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty() login: string;
  @ApiProperty() full_name: string;
  @ApiProperty({ format: 'email' }) email: string;
  @ApiProperty() avatar_url: string;
  @ApiProperty() html_url: string;
  @ApiProperty() is_admin: boolean;
  @ApiProperty({ format: 'date-time' }) created: string;
  @ApiProperty() restricted: boolean;
  @ApiProperty() active: boolean;
  @ApiProperty() prohibit_login: boolean;
  @ApiProperty() location: string;
  @ApiProperty() website: string;
  @ApiProperty() description: string;
  @ApiProperty({ enum: ['public', 'limited', 'private'] }) visibility: string;
  @ApiProperty() followers_count: number;
  @ApiProperty() following_count: number;
  @ApiProperty() starred_repos_count: number;
  @ApiProperty() username: string;
}
