import { Global, Module } from '@nestjs/common';
import { RouteTable } from './route-table';
import { SshEndpoint } from './ssh-endpoint';
import { Clock } from './time';

@Global()
@Module({ providers: [Clock, RouteTable, SshEndpoint], exports: [Clock, RouteTable, SshEndpoint] })
export class CommonModule {}
