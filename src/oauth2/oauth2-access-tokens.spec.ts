import { Clock } from '../common/time';
import type { UserAccounts } from '../users/user-accounts';
import { OAuth2AccessTokens } from './oauth2-access-tokens';
import type { OAuth2RecordStore } from './oauth2-record.store';

describe('OAuth2AccessTokens', () => {
  const token = 'A'.repeat(43);
  const user = { id: 5, isOrganization: false };

  function tokensWith(records: Map<string, Record<string, unknown>>): OAuth2AccessTokens {
    const store = {
      find: async (kind: string, id: string) => records.get(`${kind}:${id}`),
      grantScope: async (grantId: string) => (records.has(`Grant:${grantId}`) ? 'openid' : undefined),
    } as unknown as OAuth2RecordStore;
    const users = { byId: async (id: number) => (id === user.id ? user : null) } as unknown as UserAccounts;
    return new OAuth2AccessTokens(store, users, new Clock());
  }

  it('remembers a token it found valid (no guess), and forgets it once it is revoked', async () => {
    const records = new Map<string, Record<string, unknown>>([
      [`AccessToken:${token}`, { grantId: 'g1', accountId: '5', scope: 'openid' }],
      ['Grant:g1', {}],
    ]);
    const tokens = tokensWith(records);
    expect(tokens.verifiedBefore(token)).toBe(false);
    expect((await tokens.authenticate(token))?.user).toBe(user);
    expect(tokens.verifiedBefore(token)).toBe(true);
    expect(tokens.verifiedBefore('B'.repeat(43))).toBe(false);
    // Revoked: still read at every request, so the next one finds it gone, and it is a guess again.
    records.delete('Grant:g1');
    expect(await tokens.authenticate(token)).toBeNull();
    expect(tokens.verifiedBefore(token)).toBe(false);
  });

  it('remembers nothing for a token it did not find, nor for one of another shape', async () => {
    const tokens = tokensWith(new Map());
    expect(await tokens.authenticate(token)).toBeNull();
    expect(tokens.verifiedBefore(token)).toBe(false);
    expect(await tokens.authenticate('a'.repeat(40))).toBeNull();
    expect(tokens.verifiedBefore('a'.repeat(40))).toBe(false);
  });
});
