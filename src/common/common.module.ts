import { Global, Module } from '@nestjs/common';
import { RateLimitStore } from './rate-limit.store';
import { RateLimitGuard, RateLimits } from './rate-limits';
import { RouteTable } from '../http/route-table';
import { SiteUrls } from './site-urls';
import { SshEndpoint } from './ssh-endpoint';
import { Clock } from './time';

@Global()
@Module({
  providers: [Clock, RouteTable, SshEndpoint, SiteUrls, RateLimitStore, RateLimits, RateLimitGuard],
  exports: [Clock, RouteTable, SshEndpoint, SiteUrls, RateLimits, RateLimitGuard],
})
export class CommonModule {}
