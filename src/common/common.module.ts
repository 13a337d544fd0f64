import { Global, Module } from '@nestjs/common';
import { RateLimitGuard, RateLimits } from './rate-limits';
import { RouteTable } from './route-table';
import { SshEndpoint } from './ssh-endpoint';
import { Clock } from './time';

@Global()
@Module({
  providers: [Clock, RouteTable, SshEndpoint, RateLimits, RateLimitGuard],
  exports: [Clock, RouteTable, SshEndpoint, RateLimits, RateLimitGuard],
})
export class CommonModule {}
