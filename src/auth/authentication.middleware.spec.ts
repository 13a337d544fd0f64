import type { Request, Response } from 'express';
import type { RateLimits } from '../common/rate-limits';
import { loadConfig } from '../config/config';
import type { AccessTokensService } from '../users/access-tokens.service';
import type { UserStore } from '../users/user.store';
import { AuthenticationMiddleware, SIGN_IN_FAILED } from './authentication.middleware';
import * as secrets from './secrets';

/** Issue 12, finding 4: a sign-in for an account that does not exist does the same KDF work as a wrong password. */
describe('AuthenticationMiddleware password sign-in', () => {
  it('verifies against the decoy hash when the account does not exist, and answers the one failure', async () => {
    const users = { findByName: async () => null } as unknown as UserStore;
    const tokens = { authenticate: async () => Promise.reject(new Error('no')) } as unknown as AccessTokensService;
    const limits = { check: async () => undefined, consume: async () => undefined } as unknown as RateLimits;
    const middleware = new AuthenticationMiddleware(loadConfig({}), tokens, users, limits);
    const verify = jest.spyOn(secrets, 'verifyPassword');
    const request = {
      headers: { authorization: `Basic ${Buffer.from('ghost:secret').toString('base64')}` },
      query: {},
      header: () => undefined,
      socket: {},
    } as unknown as Request;
    const error = await new Promise((resolve) => void middleware.use(request, {} as Response, resolve));
    expect(verify).toHaveBeenCalledWith('secret', secrets.DECOY_PASSWORD_HASH);
    expect(error).toMatchObject({ status: 401, message: SIGN_IN_FAILED });
    verify.mockRestore();
  });
});
