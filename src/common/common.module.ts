import { Global, Module } from '@nestjs/common';
import { RouteTable } from './route-table';
import { Clock } from './time';

@Global()
@Module({ providers: [Clock, RouteTable], exports: [Clock, RouteTable] })
export class CommonModule {}
