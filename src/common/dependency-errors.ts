import { DomainError } from './errors';

/** 503 with `Retry-After`: the database, or the machine's processes or descriptors, cannot serve this now. */
export class ServiceUnavailableError extends DomainError {
  readonly status = 503;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/** 507: the disk under DATA_DIR (or the database's) is full; nothing of the request was kept. */
export class InsufficientStorageError extends DomainError {
  readonly status = 507;
  constructor() {
    super('the server has no storage space left; nothing was saved');
  }
}

/** The transaction ended under a write that went on as if it were open: nothing of it was kept. */
export class TransactionLostError extends Error {
  constructor() {
    super('the transaction was rolled back by the database (a full disk or an I/O error)');
  }
}

export const DATABASE_UNAVAILABLE = 'the database is unavailable; try again later';
export const OUT_OF_RESOURCES = 'the server is out of resources (processes, file descriptors or memory); try again later';
const DATABASE_RETRY_AFTER_SECONDS = 5;
const RESOURCES_RETRY_AFTER_SECONDS = 2;

/** No space: the file system's, a quota's, SQLite's and MySQL/MariaDB's words for it. */
const STORAGE_FULL = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL', 'ER_RECORD_FILE_FULL', 'ER_DISK_FULL']);
/** A connect to a Unix socket that is not there, or not ours to open (codes() names it so). */
const SOCKET_UNREACHABLE = 'ANVIL_SOCKET_UNREACHABLE';
/** The database does not answer, refuses, or has no connection or time for this request. */
const DATABASE_DOWN = new Set([
  SOCKET_UNREACHABLE,
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  'PROTOCOL_ENQUEUE_AFTER_QUIT',
  'PROTOCOL_ENQUEUE_HANDSHAKE_TWICE',
  'POOL_CLOSED',
  'ER_CON_COUNT_ERROR',
  'ER_TOO_MANY_USER_CONNECTIONS',
  'ER_SERVER_SHUTDOWN',
  'ER_QUERY_INTERRUPTED',
  'ER_STATEMENT_TIMEOUT',
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_LOCK_DEADLOCK',
  'ER_ERROR_IN_TRIGGER_BODY',
  'ER_ERROR_IN_UNKNOWN_TRIGGER_BODY',
  'ER_CONNECTION_KILLED',
  'ANVIL_DATABASE_ACQUIRE_TIMEOUT',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
  'SQLITE_READONLY',
]);
/** The machine is out of descriptors, processes or memory: a spawn, an open or an accept failed. */
const RESOURCES_EXHAUSTED = new Set(['EMFILE', 'ENFILE', 'EAGAIN', 'ENOMEM']);

/** Codes along an error's chain: TypeORM keeps the driver's error as `driverError`, Node as `cause`. */
function codes(error: unknown): string[] {
  const found: string[] = [];
  const queue: unknown[] = [error];
  const seen = new Set<unknown>();
  while (queue.length > 0 && seen.size < 8) {
    const current = queue.shift();
    if (!current || typeof current !== 'object' || seen.has(current)) continue;
    seen.add(current);
    const { code, errno, syscall, driverError, cause, message } = current as {
      code?: unknown;
      errno?: unknown;
      syscall?: unknown;
      driverError?: unknown;
      cause?: unknown;
      message?: unknown;
    };
    // SQLite's extended codes (SQLITE_IOERR_WRITE) count as their primary code (SQLITE_IOERR).
    if (typeof code === 'string') found.push(code, code.replace(/^(SQLITE_[A-Z]+)_.*$/, '$1'));
    // A Unix socket (DATABASE_URL's `?socket=`) that is gone or not ours to open: a server that stopped removes it.
    if (syscall === 'connect' && (code === 'ENOENT' || code === 'EACCES')) found.push(SOCKET_UNREACHABLE);
    // MariaDB reports a full disk on write as "Errcode: 28" (ENOSPC) inside another error; git, in its own words
    // on its standard error, which its failures carry in their message.
    if (typeof message === 'string') {
      if (/errcode: 28\b|no space left on device|out of diskspace|disk quota exceeded/i.test(message)) found.push('ENOSPC');
      if (/too many open files/i.test(message)) found.push('EMFILE');
    }
    if (errno === -28 && typeof code !== 'string') found.push('ENOSPC');
    queue.push(driverError, cause);
  }
  return found;
}

/**
 * The answer for a failure of what the server depends on: a full disk is a 507, a database that does not answer
 * and a machine out of descriptors or processes are a 503 with `Retry-After`; never the driver's words. Undefined
 * for anything else (a fault of the server itself, answered 500).
 */
export function dependencyFailure(error: unknown): DomainError | undefined {
  if (error instanceof DomainError) return undefined;
  const found = codes(error);
  if (found.some((code) => STORAGE_FULL.has(code))) return new InsufficientStorageError();
  if (found.some((code) => RESOURCES_EXHAUSTED.has(code))) return new ServiceUnavailableError(OUT_OF_RESOURCES, RESOURCES_RETRY_AFTER_SECONDS);
  if (found.some((code) => DATABASE_DOWN.has(code)) || error instanceof TransactionLostError) {
    return new ServiceUnavailableError(DATABASE_UNAVAILABLE, DATABASE_RETRY_AFTER_SECONDS);
  }
  return undefined;
}
