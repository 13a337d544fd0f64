import { Module } from '@nestjs/common';
import { BlobsModule } from '../blobs/blobs.module';
import { QuotaModule } from '../quota/quota.module';
import { UsersModule } from '../users/users.module';
import { GenericPackagesController } from './generic-packages.controller';
import { PackageStore } from './package.store';
import { PackagePagesController } from './package-pages.controller';
import { PackagesController } from './packages.controller';
import { PackagesLifecycle } from './packages-lifecycle';
import { PackagesService } from './packages.service';

/** The generic package registry and the package API views; files in the shared blob store. */
@Module({
  imports: [UsersModule, QuotaModule, BlobsModule],
  controllers: [GenericPackagesController, PackagesController, PackagePagesController],
  providers: [PackageStore, PackagesService, PackagesLifecycle],
})
export class PackagesModule {}
