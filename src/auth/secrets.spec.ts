import { DECOY_PASSWORD_HASH, generateToken, hashPassword, hashToken, KDF_CONCURRENCY, kdfLoad, sameHash, TOKEN_PATTERN, verifyPassword } from './secrets';

describe('secrets', () => {
  it('generates 40 lowercase hex characters', () => {
    const token = generateToken();
    expect(token).toMatch(TOKEN_PATTERN);
    expect(generateToken()).not.toBe(token);
  });

  it('hashes passwords with scrypt and a fresh salt', async () => {
    const first = await hashPassword('correct horse');
    const second = await hashPassword('correct horse');
    expect(first).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(first).not.toBe(second);
    expect(await verifyPassword('correct horse', first)).toBe(true);
    expect(await verifyPassword('wrong horse', first)).toBe(false);
    expect(await verifyPassword('correct horse', 'garbage')).toBe(false);
  });

  it('hashes tokens with PBKDF2-SHA256 into 50 bytes', async () => {
    const hash = await hashToken('a'.repeat(40), 'salt');
    expect(hash).toMatch(/^[0-9a-f]{100}$/);
    expect(sameHash(hash, await hashToken('a'.repeat(40), 'salt'))).toBe(true);
    expect(sameHash(hash, await hashToken('a'.repeat(40), 'pepper'))).toBe(false);
  });
});

describe('KDF concurrency limit (issue 12, finding 4)', () => {
  it('runs at most KDF_CONCURRENCY key derivations at once; the rest wait their turn', async () => {
    const stored = await hashPassword('right');
    let maxActive = 0;
    let watching = true;
    const watch = () => {
      maxActive = Math.max(maxActive, kdfLoad().active);
      if (watching) setImmediate(watch);
    };
    watch();
    const results = await Promise.all(Array.from({ length: 8 }, (_, index) => verifyPassword(index === 0 ? 'right' : 'wrong', stored)));
    watching = false;
    expect(results).toEqual([true, false, false, false, false, false, false, false]);
    expect(maxActive).toBeGreaterThan(0);
    expect(maxActive).toBeLessThanOrEqual(KDF_CONCURRENCY);
  });

  it('the decoy hash is a real scrypt hash that no password matches', async () => {
    expect(await verifyPassword('', DECOY_PASSWORD_HASH)).toBe(false);
    expect(DECOY_PASSWORD_HASH.split('$').slice(0, 4)).toEqual((await hashPassword('x')).split('$').slice(0, 4));
  });
});
