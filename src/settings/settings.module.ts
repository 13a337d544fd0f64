import { Module } from '@nestjs/common';
import { SettingsController } from './settings.controller';
import { SettingsService } from './settings.service';

/** /settings: the instance's limits and features as Forgejo's clients read them. */
@Module({ controllers: [SettingsController], providers: [SettingsService] })
export class SettingsModule {}
