import type { AuditService } from '../audit/audit.service';
import * as secrets from '../auth/secrets';
import { Clock } from '../common/time';
import type { Transactions } from '../database/transactions';
import type { AccessTokenEntity } from './access-token.entity';
import type { AccessTokenStore } from './access-token.store';
import { AccessTokensService } from './access-tokens.service';
import { TokenVerifications } from './token-verifications';

/** A token ending in a known last-eight must not cost one PBKDF2 per request. */
describe('AccessTokensService.authenticate', () => {
  it('verifies a failing token with a known last-eight once, then answers from memory', async () => {
    const real = secrets.generateToken();
    const salt = secrets.generateSalt();
    const stored = { id: 1, uid: 1, tokenSalt: salt, tokenHash: await secrets.hashToken(real, salt), tokenLastEight: real.slice(-8) } as AccessTokenEntity;
    const store = { findByLastEight: async () => [stored], findWithOwner: async () => ({ token: stored, user: {} }) } as unknown as AccessTokenStore;
    const service = new AccessTokensService(store, {} as Transactions, new Clock(), {} as AuditService);
    const hashes = jest.spyOn(secrets, 'hashToken');
    const forged = `${'0'.repeat(32)}${real.slice(-8)}`;
    for (let attempt = 0; attempt < 5; attempt++) {
      await expect(service.authenticate(forged)).rejects.toThrow('access token does not exist');
    }
    expect(hashes).toHaveBeenCalledTimes(1);
    hashes.mockRestore();
  });
});

describe('TokenVerifications', () => {
  it('verifies a token once when many requests present it at the same moment', async () => {
    const pending: ((value: { id: number }) => void)[] = [];
    const verify = jest.fn(() => new Promise<{ id: number }>((resolve) => pending.push(resolve)));
    const verifications = new TokenVerifications(10, verify);
    const answers = Promise.all(Array.from({ length: 20 }, () => verifications.get('digest-a', 'token-a')));
    expect(verify).toHaveBeenCalledTimes(1);
    pending[0]({ id: 7 });
    expect(await answers).toEqual(Array.from({ length: 20 }, () => ({ id: 7 })));
    await verifications.get('digest-a', 'token-a');
    expect(verify).toHaveBeenCalledTimes(1);
  });

  it('evicts the least recently used token, not everything', async () => {
    const verify = jest.fn(async (plaintext: string) => ({ id: Number(plaintext) }));
    const verifications = new TokenVerifications(3, verify);
    for (const n of ['1', '2', '3']) await verifications.get(`d${n}`, n);
    await verifications.get('d1', '1'); // 1 is now the most recently used
    await verifications.get('d4', '4'); // evicts 2, the least recently used
    expect(['d1', 'd2', 'd3', 'd4'].map((digest) => verifications.has(digest))).toEqual([true, false, true, true]);
    expect(verify).toHaveBeenCalledTimes(4);
  });

  it('keeps no entry for a token no stored token could match', async () => {
    const verifications = new TokenVerifications(3, async () => undefined);
    expect(await verifications.get('d', 'x')).toBeUndefined();
    expect(verifications.has('d')).toBe(false);
  });
});
