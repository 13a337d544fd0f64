import { Injectable } from '@nestjs/common';
import { ContentConfig, LfsConfig, PagingConfig, UploadConfig } from '../config/slices';
import { GIT_TREES_PER_PAGE } from '../content/git-data-limits';
import type { GeneralApiSettingsWire, GeneralAttachmentSettingsWire, GeneralRepoSettingsWire, GeneralUiSettingsWire } from './settings.wire';

const MIB = 1024 * 1024;

/**
 * The /settings answers: Anvil's real limits and features, read from the configuration, so that a client that
 * sizes its pages or uploads from them gets what the server enforces.
 */
@Injectable()
export class SettingsService {
  constructor(
    private readonly contentConfig: ContentConfig,
    private readonly pagingConfig: PagingConfig,
    private readonly uploadConfig: UploadConfig,
    private readonly lfsConfig: LfsConfig,
  ) {}

  api(): GeneralApiSettingsWire {
    return {
      max_response_items: this.pagingConfig.maxLimit,
      default_paging_num: this.pagingConfig.defaultLimit,
      default_git_trees_per_page: GIT_TREES_PER_PAGE,
      default_max_blob_size: this.contentConfig.maxDisplayFileBytes,
    };
  }

  repository(): GeneralRepoSettingsWire {
    return {
      mirrors_disabled: false,
      http_git_disabled: false,
      migrations_disabled: false,
      stars_disabled: false,
      time_tracking_disabled: true,
      lfs_disabled: !this.lfsConfig.startServer,
      forks_disabled: false,
    };
  }

  attachment(): GeneralAttachmentSettingsWire {
    return {
      enabled: true,
      allowed_types: '*/*',
      max_size: Math.floor(this.uploadConfig.attachmentMaxBytes / MIB),
      max_files: 1,
    };
  }

  ui(): GeneralUiSettingsWire {
    return { default_theme: 'forgejo-auto', allowed_reactions: [], custom_emojis: [] };
  }
}
