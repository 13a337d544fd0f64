import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/route-auth';
import { SettingsService } from './settings.service';
import { GeneralApiSettingsWire, GeneralAttachmentSettingsWire, GeneralRepoSettingsWire, GeneralUiSettingsWire } from './settings.wire';

@ApiTags('settings')
@Controller()
export class SettingsController {
  constructor(private readonly settings: SettingsService) {}

  @Get('settings/api')
  @Public()
  @ApiOperation({ summary: "Get instance's global settings for api" })
  @ApiOkResponse({ type: GeneralApiSettingsWire })
  api(): GeneralApiSettingsWire {
    return this.settings.api();
  }

  @Get('settings/repository')
  @Public()
  @ApiOperation({ summary: "Get instance's global settings for repositories" })
  @ApiOkResponse({ type: GeneralRepoSettingsWire })
  repository(): GeneralRepoSettingsWire {
    return this.settings.repository();
  }

  @Get('settings/attachment')
  @Public()
  @ApiOperation({ summary: "Get instance's global settings for Attachment" })
  @ApiOkResponse({ type: GeneralAttachmentSettingsWire })
  attachment(): GeneralAttachmentSettingsWire {
    return this.settings.attachment();
  }

  @Get('settings/ui')
  @Public()
  @ApiOperation({ summary: "Get instance's global settings for ui" })
  @ApiOkResponse({ type: GeneralUiSettingsWire })
  ui(): GeneralUiSettingsWire {
    return this.settings.ui();
  }
}
