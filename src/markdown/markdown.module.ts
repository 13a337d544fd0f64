import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module';
import { MarkdownRenderer } from './markdown-renderer';
import { MarkdownController } from './markdown.controller';
import { MarkdownService } from './markdown.service';
import { MentionStore } from './mention.store';

@Module({
  imports: [UsersModule],
  controllers: [MarkdownController],
  providers: [MarkdownService, MarkdownRenderer, MentionStore],
})
export class MarkdownModule {}
