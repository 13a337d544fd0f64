import * as secrets from '../auth/secrets';
import { Clock } from '../common/time';
import type { Transactions } from '../database/transactions';
import type { AccessTokenEntity } from './access-token.entity';
import type { AccessTokenStore } from './access-token.store';
import { AccessTokensService } from './access-tokens.service';
import type { UserStore } from './user.store';

/** Issue 12, suspicion 2: a token ending in a known last-eight must not cost one PBKDF2 per request. */
describe('AccessTokensService.authenticate', () => {
  it('verifies a failing token with a known last-eight once, then answers from memory', async () => {
    const real = secrets.generateToken();
    const salt = secrets.generateSalt();
    const stored = { id: 1, uid: 1, tokenSalt: salt, tokenHash: await secrets.hashToken(real, salt), tokenLastEight: real.slice(-8) } as AccessTokenEntity;
    const store = { findByLastEight: async () => [stored], findById: async () => stored } as unknown as AccessTokenStore;
    const service = new AccessTokensService(store, {} as UserStore, {} as Transactions, new Clock());
    const hashes = jest.spyOn(secrets, 'hashToken');
    const forged = `${'0'.repeat(32)}${real.slice(-8)}`;
    for (let attempt = 0; attempt < 5; attempt++) {
      await expect(service.authenticate(forged)).rejects.toThrow('access token does not exist');
    }
    expect(hashes).toHaveBeenCalledTimes(1);
    hashes.mockRestore();
  });
});
