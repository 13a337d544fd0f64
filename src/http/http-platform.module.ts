import { Global, Module } from '@nestjs/common';
import { RateLimitStore } from './rate-limit.store';
import { RateLimitGuard, RateLimits } from './rate-limits';
import { RouteTable } from './route-table';

/** The HTTP platform's injectables: the route table and the rate limits, which every controller module may use. */
@Global()
@Module({
  providers: [RouteTable, RateLimitStore, RateLimits, RateLimitGuard],
  exports: [RouteTable, RateLimits, RateLimitGuard],
})
export class HttpPlatformModule {}
