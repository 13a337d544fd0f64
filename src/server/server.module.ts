import { Module } from '@nestjs/common';
import { HealthService } from './health.service';
import { ServerController } from './server.controller';

@Module({ controllers: [ServerController], providers: [HealthService] })
export class ServerModule {}
