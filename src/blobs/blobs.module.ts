import { Module, OnModuleInit } from '@nestjs/common';
import { BlobStorage } from './blob-storage';

/** The storage of uploaded files (release attachments, package files), shared by both producers. */
@Module({ providers: [BlobStorage], exports: [BlobStorage] })
export class BlobsModule implements OnModuleInit {
  constructor(private readonly blobs: BlobStorage) {}

  async onModuleInit(): Promise<void> {
    await this.blobs.clearTemporary();
  }
}
