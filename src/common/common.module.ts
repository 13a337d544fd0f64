import { Global, Module } from '@nestjs/common';
import { RateLimitGuard, RateLimits } from './rate-limits';
import { RouteTable } from './route-table';
import { Clock } from './time';

@Global()
@Module({ providers: [Clock, RouteTable, RateLimits, RateLimitGuard], exports: [Clock, RouteTable, RateLimits, RateLimitGuard] })
export class CommonModule {}
