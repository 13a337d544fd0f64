import { ArgumentsHost, NotFoundException } from '@nestjs/common';
import { AuthContext } from '../auth/auth-context';
import { loadConfig } from '../config/config';
import type { UserEntity } from '../users/user.entity';
import { ConflictError, NotFoundError, QuotaExceededError, SearchError } from '../common/errors';
import { HttpErrorFilter } from './http-error.filter';
import type { RouteTable } from './route-table';

interface Sent {
  status?: number;
  headers: Record<string, string>;
  body?: string;
  ended?: boolean;
}

function run(exception: unknown, auth = AuthContext.anonymous(), otherMethod = false): Sent {
  const sent: Sent = { headers: {} };
  const response = {
    headersSent: false,
    setHeader(name: string, value: string) {
      sent.headers[name.toLowerCase()] = value;
    },
    status(code: number) {
      sent.status = code;
      return this;
    },
    json(body: unknown) {
      sent.body = `${JSON.stringify(body)}\n`;
      return this;
    },
    end() {
      sent.ended = true;
      return this;
    },
  };
  const request = { method: 'GET', path: '/api/v1/x', auth, headers: {}, complete: true };
  const host = { switchToHttp: () => ({ getRequest: () => request, getResponse: () => response }) } as unknown as ArgumentsHost;
  const routes = { allowsOtherMethod: () => otherMethod } as unknown as RouteTable;
  const filter = new HttpErrorFilter(loadConfig({ ROOT_URL: 'http://h/', LOG_LEVEL: 'silent' }), routes);
  (filter as unknown as { logger: { error: () => void; warn: () => void } }).logger = { error: () => undefined, warn: () => undefined };
  filter.catch(exception, host);
  return sent;
}

describe('HttpErrorFilter', () => {
  it('answers a not-found with an empty body', () => {
    expect(run(new NotFoundError())).toEqual({ status: 404, ended: true, headers: {} });
    expect(run(new NotFoundException())).toEqual({ status: 404, ended: true, headers: {} });
  });

  it('answers 405 for a known path with another method', () => {
    const sent = run(new NotFoundException(), AuthContext.anonymous(), true);
    expect(sent.status).toBe(405);
  });

  it('renders domain errors as {message, url} plus their extra fields', () => {
    expect(JSON.parse(run(new ConflictError('rule already exists: [name: x]')).body!)).toEqual({
      message: 'rule already exists: [name: x]',
      url: 'http://h/api/swagger',
    });
    expect(JSON.parse(run(new QuotaExceededError(7, 'acme')).body!)).toEqual({
      message: 'quota exceeded',
      url: 'http://h/api/swagger',
      user_id: 7,
      username: 'acme',
    });
  });

  it('renders search failures as {ok: false, error}', () => {
    const sent = run(new SearchError('index unavailable'));
    expect(sent.status).toBe(500);
    expect(JSON.parse(sent.body!)).toEqual({ ok: false, error: 'index unavailable' });
  });

  it('answers a database that does not answer with 503, Retry-After and the standard body, never the driver text', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { code: 'ECONNREFUSED' });
    const wrapped = Object.assign(new Error('Query failed'), { driverError: refused });
    for (const failure of [refused, wrapped, Object.assign(new Error('Query inactivity timeout'), { code: 'PROTOCOL_SEQUENCE_TIMEOUT' })]) {
      const sent = run(failure, new AuthContext({ id: 1, isAdmin: true } as UserEntity, 'password', null));
      expect(sent.status).toBe(503);
      expect(sent.headers['retry-after']).toMatch(/^\d+$/);
      expect(JSON.parse(sent.body!)).toEqual({ message: 'the database is unavailable; try again later', url: 'http://h/api/swagger' });
    }
  });

  it('answers a full disk (ENOSPC, SQLITE_FULL, MariaDB errno 28) with 507 and a clear message', () => {
    const failures = [
      Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }),
      Object.assign(new Error('Query failed'), { driverError: Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }) }),
      Object.assign(new Error('Error writing file \'./x\' (Errcode: 28 "No space left on device")'), { code: 'ER_ERROR_ON_WRITE' }),
      new Error("git read-tree failed (exit 128): fatal: sha1 file 'x.lock' write error. Out of diskspace"),
    ];
    for (const failure of failures) {
      const sent = run(failure);
      expect(sent.status).toBe(507);
      expect(JSON.parse(sent.body!)).toEqual({ message: 'the server has no storage space left; nothing was saved', url: 'http://h/api/swagger' });
    }
  });

  it('answers no descriptors or processes left (EMFILE, EAGAIN, ENOMEM) with 503', () => {
    for (const code of ['EMFILE', 'EAGAIN', 'ENOMEM']) {
      const sent = run(Object.assign(new Error(`spawn git ${code}`), { code }));
      expect(sent.status).toBe(503);
      expect(sent.headers['retry-after']).toMatch(/^\d+$/);
    }
  });

  it('renders a search failed by its database as 503 {ok: false, error} without the driver text', () => {
    const sent = run(new SearchError('the database is unavailable; try again later', { status: 503, retryAfterSeconds: 5 }));
    expect(sent.status).toBe(503);
    expect(sent.headers['retry-after']).toBe('5');
    expect(JSON.parse(sent.body!)).toEqual({ ok: false, error: 'the database is unavailable; try again later' });
  });

  it('hides the cause of a 500 from everyone but site admins', () => {
    const failure = new Error('SQLITE_CORRUPT: database disk image is malformed');
    const anonymous = run(failure);
    expect(anonymous.status).toBe(500);
    expect(JSON.parse(anonymous.body!)).toEqual({ message: '', url: 'http://h/api/swagger' });
    const admin = new AuthContext({ id: 1, isAdmin: true } as UserEntity, 'password', null);
    expect(JSON.parse(run(failure, admin).body!).message).toBe('SQLITE_CORRUPT: database disk image is malformed');
  });
});
