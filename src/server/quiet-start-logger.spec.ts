import type { LoggerService } from '@nestjs/common';
import { QuietStartLogger } from './quiet-start-logger';

describe('QuietStartLogger', () => {
  it("logs Nest's route mapping and module loading at debug level, everything else as it came", () => {
    const calls: string[] = [];
    const inner: LoggerService = {
      log: (message: string, context?: string) => calls.push(`log ${context}: ${message}`),
      debug: (message: string, context?: string) => calls.push(`debug ${context}: ${message}`),
      error: (message: string) => calls.push(`error ${message}`),
      warn: (message: string) => calls.push(`warn ${message}`),
    };
    const logger = new QuietStartLogger(inner);
    logger.log('Mapped {/api/v1/user, GET} route', 'RouterExplorer');
    logger.log('UsersModule dependencies initialized', 'InstanceLoader');
    logger.log('Anvil listening', 'Anvil');
    logger.warn('careful');
    expect(calls).toEqual([
      'debug RouterExplorer: Mapped {/api/v1/user, GET} route',
      'debug InstanceLoader: UsersModule dependencies initialized',
      'log Anvil: Anvil listening',
      'warn careful',
    ]);
  });
});
