import { generateToken, hashPassword, hashToken, sameHash, TOKEN_PATTERN, verifyPassword } from './secrets';

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
