import { loadConfig } from '../config/config';
import { loggablePath, requestLogOptions } from './request-log';

describe('request log', () => {
  it('never logs a query-string token', () => {
    const secret = 'a'.repeat(40);
    const path = loggablePath(`/api/v1/user?page=2&token=${secret}&access_token=${secret}`);
    expect(path).not.toContain(secret);
    expect(path).toBe('/api/v1/user?page=2&token=[redacted]&access_token=[redacted]');
  });

  it('logs method and path but no headers (so never the Authorization header)', () => {
    const options = requestLogOptions(loadConfig({})).pinoHttp as { serializers: { req: (r: unknown) => unknown } };
    const logged = options.serializers.req({
      method: 'GET',
      url: '/api/v1/user',
      headers: { authorization: 'Basic c2VjcmV0OnNlY3JldA==' },
    });
    expect(logged).toEqual({ method: 'GET', path: '/api/v1/user' });
    expect(JSON.stringify(logged)).not.toContain('c2VjcmV0');
  });
});
