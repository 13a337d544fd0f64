import type { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';
import type { LogConfig } from '../config/slices';

/** One open destination per LOG_FILE in a process: every app in it (the e2e tests start many) shares it. */
const destinations = new Map<string, pino.DestinationStream>();

function fileDestination(file: string): pino.DestinationStream {
  let destination = destinations.get(file);
  if (!destination) {
    destination = pino.destination({ dest: file, sync: true, append: true });
    destinations.set(file, destination);
  }
  return destination;
}

/**
 * The application's one logger: JSON lines at LOG_LEVEL, to LOG_FILE (appended, written synchronously) or the
 * configured standard stream.
 */
export function createAppLog(config: LogConfig): Logger {
  if (config.logFile) return pino({ level: config.logLevel }, fileDestination(config.logFile));
  return pino({ level: config.logLevel }, config.logStream === 'stderr' ? pino.destination({ dest: 2, sync: true }) : undefined);
}

/**
 * Nest's LoggerService over the application log: `new Logger('Context')` anywhere in the code writes one line
 * with `context`, and an error's stack (Nest passes it as the second argument) as `stack`.
 */
export class NestLogAdapter implements LoggerService {
  constructor(private readonly pino: Logger) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: pino.Level, message: unknown, params: unknown[]): void {
    if (!this.pino.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    const rest = [...params];
    if (rest.length > 0 && typeof rest[rest.length - 1] === 'string') fields.context = rest.pop();
    if (level === 'error' && typeof rest[0] === 'string') fields.stack = rest.shift();
    if (message instanceof Error) this.pino[level]({ ...fields, err: { type: message.name, message: message.message } }, message.message);
    else if (message !== null && typeof message === 'object') this.pino[level]({ ...fields, ...(message as object) });
    else this.pino[level](fields, String(message));
  }
}
