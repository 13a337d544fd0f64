import { DATABASE_UNAVAILABLE, dependencyFailure, InsufficientStorageError, ServiceUnavailableError } from './dependency-errors';

/** Failures of what the server depends on, told from faults of its own by their codes. */
describe('dependencyFailure', () => {
  const connectError = (code: string, address: string) => Object.assign(new Error(`connect ${code} ${address}`), { code, syscall: 'connect', address });

  it('answers 503 for a database socket that is gone or not ours to open, as for a refused port', () => {
    for (const error of [
      connectError('ENOENT', '/run/mysqld/mysqld.sock'),
      connectError('EACCES', '/run/mysqld/mysqld.sock'),
      Object.assign(new Error('Connection lost'), { driverError: connectError('ENOENT', '/tmp/db.sock') }),
      connectError('ECONNREFUSED', '127.0.0.1:3306'),
    ]) {
      const failure = dependencyFailure(error);
      expect(failure).toBeInstanceOf(ServiceUnavailableError);
      expect(failure?.message).toBe(DATABASE_UNAVAILABLE);
    }
  });

  it('answers 503 for triggers the database failed to load, after the retries of the statement gave up', () => {
    const triggers = Object.assign(new Error("Unknown trigger has an error in its body: 'Query was empty'"), {
      code: 'ER_ERROR_IN_UNKNOWN_TRIGGER_BODY',
      errno: 1711,
    });
    expect(dependencyFailure(Object.assign(new Error('query failed'), { driverError: triggers }))).toBeInstanceOf(ServiceUnavailableError);
  });

  it('leaves a missing file of the server itself, and other faults, to be answered 500', () => {
    expect(dependencyFailure(Object.assign(new Error('ENOENT: no such file or directory, open /x'), { code: 'ENOENT', syscall: 'open' }))).toBeUndefined();
    expect(dependencyFailure(new TypeError('x is undefined'))).toBeUndefined();
  });

  it('answers 507 for a full disk', () => {
    expect(dependencyFailure(Object.assign(new Error('write'), { code: 'ENOSPC' }))).toBeInstanceOf(InsufficientStorageError);
  });
});
