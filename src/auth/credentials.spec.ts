import { TooManyRequestsError, UnauthorizedError } from '../common/errors';
import { loadConfig } from '../config/config';
import type { UsersService } from '../users/users.service';
import type { AuditService } from '../audit/audit.service';
import type { RateLimits } from '../http/rate-limits';
import type { AccessTokensService } from '../users/access-tokens.service';
import type { UserAccounts } from '../users/user-accounts';
import type { OAuth2AccessTokens } from '../oauth2/oauth2-access-tokens';
import { CredentialChain, SIGN_IN_FAILED } from './credentials';
import * as secrets from './secrets';

/** No OAuth2 access token exists in these tests. */
const NO_OAUTH2_TOKENS = { verifiedBefore: () => false, authenticate: async () => null } as unknown as OAuth2AccessTokens;

/**
 * Settles `answers`, letting every step parked in `waiting` go on a turn of the event loop at a time (the token
 * lookups or key derivations of a burst); `onRound` sees how many were waiting before each release.
 */
async function settleReleasing<T>(answers: Promise<T>[], waiting: (() => void)[], onRound?: (parked: number) => void): Promise<PromiseSettledResult<T>[]> {
  const all = Promise.allSettled(answers);
  let settled = false;
  void all.then(() => (settled = true));
  while (!settled) {
    onRound?.(waiting.length);
    waiting.splice(0).forEach((release) => release());
    await new Promise((resolve) => setImmediate(resolve));
  }
  return all;
}

/** A sign-in for an account that does not exist does the same KDF work as a wrong password. */
describe('CredentialChain password sign-in', () => {
  it('verifies against the decoy hash when the account does not exist, and answers the one failure', async () => {
    const users = { byName: async () => null } as unknown as UserAccounts;
    const tokens = { verifiedBefore: () => false, authenticate: async () => Promise.reject(new Error('no')) } as unknown as AccessTokensService;
    const counted: string[] = [];
    const refunded: string[] = [];
    const limits = {
      check: async () => undefined,
      consume: async (name: string, key: string) => void counted.push(`${name} ${key}`),
      reserve: async (name: string, key: string) => {
        counted.push(`${name} ${key}`);
        return async () => void refunded.push(`${name} ${key}`);
      },
    } as unknown as RateLimits;
    const chain = new CredentialChain(loadConfig({}).reverseProxy, tokens, users, {} as UsersService, limits, NO_OAUTH2_TOKENS, {
      signIn: async () => undefined,
    } as unknown as AuditService);
    const verify = jest.spyOn(secrets, 'verifyPassword');
    await expect(chain.authenticate({ kind: 'basic', username: 'Ghost', secret: 'secret' }, 'ip:192.0.2.1')).rejects.toMatchObject({
      status: 401,
      message: SIGN_IN_FAILED,
    });
    expect(verify).toHaveBeenCalledWith('secret', secrets.DECOY_PASSWORD_HASH, 'ip:192.0.2.1|account:ghost');
    expect(counted).toEqual(['signInPerIp ip:192.0.2.1', 'signInPerAccount account:ghost']);
    expect(refunded).toEqual([]);
    verify.mockRestore();
  });

  it('counts a password attempt before its key derivation, and runs none once the allowance is spent', async () => {
    const users = { byName: async () => null } as unknown as UserAccounts;
    const tokens = { verifiedBefore: () => false, authenticate: async () => Promise.reject(new Error('no')) } as unknown as AccessTokensService;
    const order: string[] = [];
    const limits = {
      reserve: async (name: string) => {
        order.push(`reserve ${name}`);
        if (name === 'signInPerAccount') throw new TooManyRequestsError('too many requests, try again later', 5);
        return async () => void order.push(`refund ${name}`);
      },
    } as unknown as RateLimits;
    const chain = new CredentialChain(loadConfig({}).reverseProxy, tokens, users, {} as UsersService, limits, NO_OAUTH2_TOKENS, {
      signIn: async () => undefined,
    } as unknown as AuditService);
    const verify = jest.spyOn(secrets, 'verifyPassword');
    await expect(chain.authenticate({ kind: 'basic', username: 'Ghost', secret: 'secret' }, 'ip:192.0.2.1')).rejects.toMatchObject({ status: 429 });
    expect(verify).not.toHaveBeenCalled();
    // The address's count is given back: the refusal was the account's.
    expect(order).toEqual(['reserve signInPerIp', 'reserve signInPerAccount', 'refund signInPerIp']);
    verify.mockRestore();
  });

  it('takes a token verified before, given as the password, without the key derivation or the counts', async () => {
    const token = 'a'.repeat(40);
    const owner = { id: 7, name: 'ci', isActive: true, prohibitLogin: false, mustChangePassword: false };
    let known = false;
    const tokens = {
      verifiedBefore: (plaintext: string) => known && plaintext === token,
      authenticate: async (plaintext: string) => (plaintext === token ? { token: { scope: 'all' }, user: owner } : Promise.reject(new Error('no'))),
    } as unknown as AccessTokensService;
    const users = { byName: async () => ({ ...owner, isOrganization: false, passwdHash: secrets.DECOY_PASSWORD_HASH }) } as unknown as UserAccounts;
    const counted: string[] = [];
    const limits = {
      reserve: async (name: string) => {
        counted.push(name);
        return async () => undefined;
      },
    } as unknown as RateLimits;
    const chain = new CredentialChain(loadConfig({}).reverseProxy, tokens, users, {} as UsersService, limits, NO_OAUTH2_TOKENS, {
      signIn: async () => undefined,
    } as unknown as AuditService);
    const verify = jest.spyOn(secrets, 'verifyPassword');
    // First time: a password attempt like any other (counted, derived), then the token.
    expect((await chain.authenticate({ kind: 'basic', username: 'ci', secret: token }, 'ip:192.0.2.1')).user).toMatchObject({ id: 7 });
    expect(verify).toHaveBeenCalledTimes(1);
    expect(counted).toEqual(['signInPerIp', 'signInPerAccount']);
    // Verified before: neither again, as the password or as the user name.
    known = true;
    expect((await chain.authenticate({ kind: 'basic', username: 'ci', secret: token }, 'ip:192.0.2.1')).user).toMatchObject({ id: 7 });
    expect((await chain.authenticate({ kind: 'basic', username: token, secret: 'x-oauth-basic' }, 'ip:192.0.2.1')).user).toMatchObject({ id: 7 });
    expect(verify).toHaveBeenCalledTimes(1);
    expect(counted).toEqual(['signInPerIp', 'signInPerAccount']);
    verify.mockRestore();
  });

  describe('a burst with one token not verified before', () => {
    const token = 'b'.repeat(40);
    const owner = { id: 8, name: 'ci', isActive: true, prohibitLogin: false, mustChangePassword: false, isOrganization: false };

    /** A chain whose sign-in limit allows `allowed` attempts at once, and whose token lookups wait for `release`. */
    function chainWith(allowed: number, valid: boolean) {
      let known = false;
      let verifying = 0;
      let mostAtOnce = 0;
      let firstRound: number | undefined;
      const reserved: string[] = [];
      const lookups: (() => void)[] = [];
      const tokens = {
        verifiedBefore: (plaintext: string) => known && plaintext === token,
        authenticate: async (plaintext: string) => {
          verifying += 1;
          mostAtOnce = Math.max(mostAtOnce, verifying);
          await new Promise<void>((resolve) => lookups.push(resolve));
          verifying -= 1;
          if (!valid || plaintext !== token) throw new UnauthorizedError('token is required');
          known = true;
          return { token: { scope: 'all' }, user: owner };
        },
      } as unknown as AccessTokensService;
      let held = 0;
      const limits = {
        reserve: async (name: string) => {
          if (held >= allowed) throw new TooManyRequestsError('too many requests, try again later', 60);
          held += 1;
          reserved.push(name);
          return async () => void (held -= 1);
        },
        consume: async () => undefined,
      } as unknown as RateLimits;
      const chain = new CredentialChain(loadConfig({}).reverseProxy, tokens, {} as UserAccounts, {} as UsersService, limits, NO_OAUTH2_TOKENS, {
        signIn: async () => undefined,
      } as unknown as AuditService);
      const drive = <T>(answers: Promise<T>[]) =>
        settleReleasing(answers, lookups, (parked) => {
          if (firstRound === undefined && parked > 0) firstRound = parked;
        });
      return { chain, drive, reserved, mostAtOnce: () => mostAtOnce, waitingAtFirst: () => firstRound };
    }

    it('is counted and verified once, and every request of it is served', async () => {
      const { chain, drive, reserved, waitingAtFirst } = chainWith(1, true);
      const answers = await drive(
        Array.from({ length: 6 }, (_, index) =>
          index % 2 === 0
            ? chain.authenticate({ kind: 'token', token, fromQuery: false }, 'ip:192.0.2.9')
            : chain.authenticate({ kind: 'basic', username: token, secret: 'x-oauth-basic' }, 'ip:192.0.2.9'),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill('fulfilled'));
      expect(reserved).toEqual(['signInPerIp']);
      // The others waited for the first verification, then went the way of a token verified before.
      expect(waitingAtFirst()).toBe(1);
    });

    it('of a wrong token is tried one attempt after another, each counted', async () => {
      const { chain, drive, reserved, mostAtOnce } = chainWith(10, false);
      const answers = await drive(Array.from({ length: 3 }, () => chain.authenticate({ kind: 'token', token, fromQuery: false }, 'ip:192.0.2.9')));
      expect(answers.map((answer) => answer.status)).toEqual(['rejected', 'rejected', 'rejected']);
      for (const answer of answers) expect((answer as PromiseRejectedResult).reason).toBeInstanceOf(UnauthorizedError);
      expect(reserved).toEqual(['signInPerIp', 'signInPerIp', 'signInPerIp']);
      expect(mostAtOnce()).toBe(1);
    });
  });

  describe('a burst with one password', () => {
    const owner = { id: 7, name: 'ci', isActive: true, prohibitLogin: false, mustChangePassword: false, isOrganization: false, passwdHash: 'stored' };

    function chainFor(right: boolean) {
      const reserved: string[] = [];
      const limits = {
        reserve: async (name: string) => {
          reserved.push(name);
          return async () => undefined;
        },
      } as unknown as RateLimits;
      const users = { byName: async () => owner } as unknown as UserAccounts;
      const tokens = {
        verifiedBefore: () => false,
        authenticate: async () => Promise.reject(new UnauthorizedError('token is required')),
      } as unknown as AccessTokensService;
      const chain = new CredentialChain(loadConfig({}).reverseProxy, tokens, users, {} as UsersService, limits, NO_OAUTH2_TOKENS, {
        signIn: async () => undefined,
      } as unknown as AuditService);
      const derivations: (() => void)[] = [];
      const verify = jest.spyOn(secrets, 'verifyPassword').mockImplementation(async () => {
        await new Promise<void>((resolve) => derivations.push(resolve));
        return right;
      });
      const settle = <T>(answers: Promise<T>[]) => settleReleasing(answers, derivations);
      return { chain, reserved, verify, settle };
    }

    afterEach(() => jest.restoreAllMocks());

    it('at once shares one key derivation and one count, each request with a user of its own', async () => {
      const { chain, reserved, verify, settle } = chainFor(true);
      const answers = await settle(Array.from({ length: 6 }, () => chain.authenticate({ kind: 'basic', username: 'CI', secret: 'hunter2!' }, 'ip:192.0.2.5')));
      expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill('fulfilled'));
      const users = answers.map((answer) => (answer as PromiseFulfilledResult<{ user: { id: number } }>).value.user);
      expect(users.map((user) => user.id)).toEqual(Array(6).fill(7));
      expect(new Set(users).size).toBe(6);
      expect(verify).toHaveBeenCalledTimes(1);
      expect(reserved).toEqual(['signInPerIp', 'signInPerAccount']);
      // Afterwards a new attempt of its own: nothing of the verification was kept.
      await settle([chain.authenticate({ kind: 'basic', username: 'ci', secret: 'hunter2!' }, 'ip:192.0.2.5')]);
      expect(verify).toHaveBeenCalledTimes(2);
    });

    it('at once, wrong, is one failure for all, and other addresses or passwords are attempts of their own', async () => {
      const { chain, reserved, verify, settle } = chainFor(false);
      const answers = await settle([
        ...Array.from({ length: 4 }, () => chain.authenticate({ kind: 'basic', username: 'ci', secret: 'guess-1' }, 'ip:192.0.2.5')),
        chain.authenticate({ kind: 'basic', username: 'ci', secret: 'guess-1' }, 'ip:192.0.2.6'),
        chain.authenticate({ kind: 'basic', username: 'ci', secret: 'guess-2' }, 'ip:192.0.2.5'),
      ]);
      for (const answer of answers) expect((answer as PromiseRejectedResult).reason).toBeInstanceOf(UnauthorizedError);
      expect(verify).toHaveBeenCalledTimes(3);
      expect(reserved.filter((name) => name === 'signInPerIp')).toHaveLength(3);
    });
  });
});
