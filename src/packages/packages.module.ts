import { Module, OnModuleInit } from '@nestjs/common';
import { InvalidInputError } from '../common/errors';
import { UsersService } from '../users/users.service';
import { BlobsModule } from '../blobs/blobs.module';
import { QuotaModule } from '../quota/quota.module';
import { UsersModule } from '../users/users.module';
import { GenericPackagesController } from './generic-packages.controller';
import { PackageStore } from './package.store';
import { PackagePagesController } from './package-pages.controller';
import { PackagesController } from './packages.controller';
import { PackagesService } from './packages.service';

/** The generic package registry and the package API views; files in the shared blob store. */
@Module({
  imports: [UsersModule, QuotaModule, BlobsModule],
  controllers: [GenericPackagesController, PackagesController, PackagePagesController],
  providers: [PackageStore, PackagesService],
})
export class PackagesModule implements OnModuleInit {
  constructor(
    private readonly users: UsersService,
    private readonly store: PackageStore,
  ) {}

  onModuleInit(): void {
    // As Forgejo (ErrUserOwnPackages): a user or organisation that still owns packages cannot be deleted.
    this.users.onUserDeleted(async (tx, user) => {
      if (await this.store.ownsAny(user.id, tx)) throw new InvalidInputError(`user still has ownership of packages [uid: ${user.id}]`);
    });
  }
}
