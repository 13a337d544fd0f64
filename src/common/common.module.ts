import { Global, Module } from '@nestjs/common';
import { RateLimitStore } from './rate-limit.store';
import { RateLimitGuard, RateLimits } from './rate-limits';
import { RouteTable } from './route-table';
import { SshEndpoint } from './ssh-endpoint';
import { Clock } from './time';

@Global()
@Module({
  providers: [Clock, RouteTable, SshEndpoint, RateLimitStore, RateLimits, RateLimitGuard],
  exports: [Clock, RouteTable, SshEndpoint, RateLimits, RateLimitGuard],
})
export class CommonModule {}
