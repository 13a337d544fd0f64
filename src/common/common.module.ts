import { Global, Module } from '@nestjs/common';
import { SiteUrls } from './site-urls';
import { SshEndpoint } from './ssh-endpoint';
import { Clock } from './time';

@Global()
@Module({
  providers: [Clock, SshEndpoint, SiteUrls],
  exports: [Clock, SshEndpoint, SiteUrls],
})
export class CommonModule {}
