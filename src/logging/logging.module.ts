import { Global, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { LogConfig } from '../config/slices';
import { createAppLog } from './app-log';
import { RequestLog } from './request-log';

/** The application log (pino) and its one request logger, shared by the API and the git routes. */
export const APP_LOG = Symbol('APP_LOG');

@Global()
@Module({
  providers: [
    { provide: APP_LOG, inject: [LogConfig], useFactory: (config: LogConfig) => createAppLog(config) },
    { provide: RequestLog, inject: [APP_LOG], useFactory: (log: Logger) => new RequestLog(log) },
  ],
  exports: [APP_LOG, RequestLog],
})
export class LoggingModule {}
