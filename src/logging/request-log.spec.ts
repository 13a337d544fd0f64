import type { IncomingMessage, ServerResponse } from 'node:http';
import { loggablePath, requestLine } from './request-log';

describe('request log', () => {
  it('never logs a query-string token', () => {
    const secret = 'a'.repeat(40);
    const path = loggablePath(`/api/v1/user?page=2&token=${secret}&access_token=${secret}`);
    expect(path).not.toContain(secret);
    expect(path).toBe('/api/v1/user?page=2&token=[redacted]&access_token=[redacted]');
  });

  it('redacts secrets by their decoded names, however the name is spelled on the wire', () => {
    const secret = 'b'.repeat(40);
    for (const name of ['%74oken', 'access%5Ftoken', 'TOKEN', 'Access_Token', 'to%6Ben', 'password']) {
      const path = loggablePath(`/api/v1/user?${name}=${secret}&page=2`);
      expect(path).not.toContain(secret);
      expect(path).toContain('page=2');
    }
  });

  it('logs method and path but no headers (so never the Authorization header)', () => {
    const request = {
      method: 'GET',
      url: '/api/v1/user?token=c2VjcmV0',
      headers: { authorization: 'Basic c2VjcmV0OnNlY3JldA==' },
      clientIp: '203.0.113.7',
    } as unknown as IncomingMessage;
    const logged = requestLine(request, { statusCode: 200 } as ServerResponse, 1.6);
    expect(logged).toEqual({ req: { method: 'GET', path: '/api/v1/user?token=[redacted]', remote: '203.0.113.7' }, res: { status: 200 }, duration_ms: 2 });
    expect(JSON.stringify(logged)).not.toContain('c2VjcmV0');
  });
});
