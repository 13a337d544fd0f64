import { Global, Module } from '@nestjs/common';
import { HealthService } from './health.service';
import { Readiness } from './readiness';
import { ServerController } from './server.controller';

@Global()
@Module({ controllers: [ServerController], providers: [Readiness, HealthService], exports: [Readiness] })
export class ServerModule {}
