import { Global, Module } from '@nestjs/common';
import { HealthService } from './health.service';
import { Readiness } from './readiness';
import { ServerController } from './server.controller';
import { StorageReserve } from './storage-reserve';

@Global()
@Module({ controllers: [ServerController], providers: [Readiness, HealthService, StorageReserve], exports: [Readiness, StorageReserve] })
export class ServerModule {}
