import type { QueryRunner } from 'typeorm';
import { isRetryableConflict, withStatementRetry } from './statement-retry';

/** What mysql2 (through TypeORM) throws when Galera's certification or InnoDB's deadlock detection aborts a statement. */
function conflict(): Error {
  return Object.assign(new Error('Deadlock found when trying to get lock; try restarting transaction'), { code: 'ER_LOCK_DEADLOCK', errno: 1213 });
}

/** A query runner whose statements fail with `failures` in turn, then succeed; it records every statement sent. */
function runner(failures: Error[], inTransaction = false): QueryRunner & { sent: string[] } {
  const sent: string[] = [];
  const stub = {
    isTransactionActive: inTransaction,
    sent,
    query: (sql: string) => {
      sent.push(sql);
      const failure = failures.shift();
      return failure ? Promise.reject(failure) : Promise.resolve({ affected: 1 });
    },
  };
  return stub as unknown as QueryRunner & { sent: string[] };
}

const noPause = () => Promise.resolve();

describe('single statements aborted by a conflict (1213)', () => {
  it('runs a statement outside a transaction again until it succeeds', async () => {
    const stub = runner([conflict(), conflict()]);
    const result = await withStatementRetry(stub, noPause).query('UPDATE rate_limit SET points = points + 1 WHERE k = ?', ['a'], true);
    expect(result).toEqual({ affected: 1 });
    expect(stub.sent).toHaveLength(3);
  });

  it('recognises the conflict by its code or its number, also wrapped by TypeORM', () => {
    expect(isRetryableConflict({ errno: 1213 })).toBe(true);
    expect(isRetryableConflict({ driverError: { code: 'ER_LOCK_DEADLOCK' } })).toBe(true);
    expect(isRetryableConflict({ code: 'ER_DUP_ENTRY', errno: 1062 })).toBe(false);
    // A table's triggers the server failed to load: the statement stopped before it changed a row.
    expect(isRetryableConflict({ driverError: { code: 'ER_ERROR_IN_UNKNOWN_TRIGGER_BODY', errno: 1711 } })).toBe(true);
    expect(isRetryableConflict({ errno: 1710 })).toBe(true);
  });

  it('gives up after its attempts and throws the conflict to the caller', async () => {
    const stub = runner(Array.from({ length: 20 }, conflict));
    await expect(withStatementRetry(stub, noPause).query('DELETE FROM claim WHERE id = ?', ['x'])).rejects.toMatchObject({ errno: 1213 });
    expect(stub.sent).toHaveLength(8);
  });

  it('never runs a statement again inside a transaction: the whole transaction was aborted', async () => {
    const stub = runner([conflict()], true);
    await expect(withStatementRetry(stub, noPause).query('UPDATE star SET x = 1')).rejects.toMatchObject({ errno: 1213 });
    expect(stub.sent).toHaveLength(1);
  });

  it('passes other errors through at once', async () => {
    const duplicate = Object.assign(new Error('Duplicate entry'), { code: 'ER_DUP_ENTRY', errno: 1062 });
    const stub = runner([duplicate]);
    await expect(withStatementRetry(stub, noPause).query('INSERT INTO x VALUES (1)')).rejects.toBe(duplicate);
    expect(stub.sent).toHaveLength(1);
  });
});
