import { ApiProperty, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'GeneralAPISettings' })
export class GeneralApiSettingsWire {
  @ApiProperty({ format: 'int64', description: 'the largest `limit` a list accepts (MAX_RESPONSE_ITEMS)' }) max_response_items: number;
  @ApiProperty({ format: 'int64', description: 'the page size when `limit` is absent (DEFAULT_PAGING_NUM)' }) default_paging_num: number;
  @ApiProperty({ format: 'int64', description: 'tree entries per page of git/trees' }) default_git_trees_per_page: number;
  @ApiProperty({ format: 'int64', description: 'bytes up to which contents and git/blobs carry the content (MAX_DISPLAY_FILE_SIZE)' })
  default_max_blob_size: number;
}

@ApiSchema({ name: 'GeneralRepoSettings' })
export class GeneralRepoSettingsWire {
  @ApiProperty() mirrors_disabled: boolean;
  @ApiProperty() http_git_disabled: boolean;
  @ApiProperty() migrations_disabled: boolean;
  @ApiProperty() stars_disabled: boolean;
  @ApiProperty({ description: 'true: Anvil has no issue tracker to track time on' }) time_tracking_disabled: boolean;
  @ApiProperty({ description: 'true: Git LFS is not served (LFS_START_SERVER off)' }) lfs_disabled: boolean;
  @ApiProperty({ description: 'false: repositories can be forked' }) forks_disabled: boolean;
}

@ApiSchema({ name: 'GeneralAttachmentSettings' })
export class GeneralAttachmentSettingsWire {
  @ApiProperty() enabled: boolean;
  @ApiProperty({ description: 'any type: release attachments are not filtered by type' }) allowed_types: string;
  @ApiProperty({ format: 'int64', description: 'MiB (ATTACHMENT_MAX_SIZE)' }) max_size: number;
  @ApiProperty({ format: 'int64', description: 'files per upload request' }) max_files: number;
}

@ApiSchema({ name: 'GeneralUISettings' })
export class GeneralUiSettingsWire {
  @ApiProperty() default_theme: string;
  @ApiProperty({ type: [String], description: 'empty: Anvil has no reactions' }) allowed_reactions: string[];
  @ApiProperty({ type: [String], description: 'empty: Anvil has no custom emojis' }) custom_emojis: string[];
}
