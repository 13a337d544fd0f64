import { Module, OnModuleInit } from '@nestjs/common';
import { BlobStore } from './blob-store';

/** The storage of uploaded files (release attachments, package files), shared by both producers. */
@Module({ providers: [BlobStore], exports: [BlobStore] })
export class BlobsModule implements OnModuleInit {
  constructor(private readonly blobs: BlobStore) {}

  async onModuleInit(): Promise<void> {
    await this.blobs.clearTemporary();
  }
}
