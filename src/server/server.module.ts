import { Global, Module } from '@nestjs/common';
import { Readiness } from './readiness';
import { ServerController } from './server.controller';

@Global()
@Module({ controllers: [ServerController], providers: [Readiness], exports: [Readiness] })
export class ServerModule {}
