import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { TagArchiveDownloadCountWire } from '../content/content.wire';
import { UserWire } from '../users/user.wire';

/** `Attachment` (Forgejo's API v1). */
@ApiSchema({ name: 'Attachment' })
export class AttachmentWire {
  @ApiProperty({ type: 'integer', format: 'int64' }) id: number;
  @ApiProperty() name: string;
  @ApiProperty({ type: 'integer', format: 'int64' }) size: number;
  @ApiProperty({ type: 'integer', format: 'int64' }) download_count: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty() uuid: string;
  @ApiProperty({ description: 'the file at ROOT_URL, or the link an external asset was given' }) browser_download_url: string;
  @ApiProperty({ enum: ['attachment', 'external'] }) type: string;
}

/** `Release` (Forgejo's API v1), fields in Forgejo's order. */
@ApiSchema({ name: 'Release' })
export class ReleaseWire {
  @ApiProperty({ type: 'integer', format: 'int64' }) id: number;
  @ApiProperty() tag_name: string;
  @ApiProperty() target_commitish: string;
  @ApiProperty() name: string;
  @ApiProperty() body: string;
  @ApiProperty() url: string;
  @ApiProperty() html_url: string;
  @ApiProperty() tarball_url: string;
  @ApiProperty() zipball_url: string;
  @ApiProperty() hide_archive_links: boolean;
  @ApiProperty() upload_url: string;
  @ApiProperty() draft: boolean;
  @ApiProperty() prerelease: boolean;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) published_at: string;
  @ApiProperty({ type: UserWire }) author: UserWire;
  @ApiProperty({ type: [AttachmentWire] }) assets: AttachmentWire[];
  @ApiProperty({ type: TagArchiveDownloadCountWire }) archive_download_count: TagArchiveDownloadCountWire;
}
