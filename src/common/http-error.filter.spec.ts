import { ArgumentsHost, NotFoundException } from '@nestjs/common';
import { AuthContext } from '../auth/auth-context';
import { loadConfig } from '../config/config';
import type { UserEntity } from '../users/user.entity';
import { ConflictError, NotFoundError, QuotaExceededError, SearchError } from './errors';
import { HttpErrorFilter } from './http-error.filter';
import type { RouteTable } from './route-table';

interface Sent {
  status?: number;
  body?: string;
  ended?: boolean;
}

function run(exception: unknown, auth = AuthContext.anonymous(), otherMethod = false): Sent {
  const sent: Sent = {};
  const response = {
    headersSent: false,
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
  (filter as unknown as { logger: { error: () => void } }).logger = { error: () => undefined };
  filter.catch(exception, host);
  return sent;
}

describe('HttpErrorFilter', () => {
  it('answers a not-found with an empty body', () => {
    expect(run(new NotFoundError())).toEqual({ status: 404, ended: true });
    expect(run(new NotFoundException())).toEqual({ status: 404, ended: true });
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

  it('hides the cause of a 500 from everyone but site admins', () => {
    const failure = new Error('SQLITE_CORRUPT: database disk image is malformed');
    const anonymous = run(failure);
    expect(anonymous.status).toBe(500);
    expect(JSON.parse(anonymous.body!)).toEqual({ message: '', url: 'http://h/api/swagger' });
    const admin = new AuthContext({ id: 1, isAdmin: true } as UserEntity, 'password', null);
    expect(JSON.parse(run(failure, admin).body!).message).toBe('SQLITE_CORRUPT: database disk image is malformed');
  });
});
