import {
  DECOY_PASSWORD_HASH,
  FairSlots,
  generateToken,
  hashPassword,
  hashToken,
  KDF_CONCURRENCY,
  KdfBusyError,
  kdfLoad,
  sameHash,
  TOKEN_PATTERN,
  verifyPassword,
} from './secrets';

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

describe('KDF concurrency limit', () => {
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

  it('starts waiting work round robin across clients: a flood waits behind itself', async () => {
    const slots = new FairSlots(1, 100);
    const started: string[] = [];
    const gates: (() => void)[] = [];
    const job = (name: string) => () =>
      new Promise<void>((resolve) => {
        started.push(name);
        gates.push(resolve);
      });
    const all = [
      ...Array.from({ length: 5 }, (_, index) => slots.run('flood', job(`flood${index}`))),
      slots.run('honest', job('honest')),
      slots.run('other', job('other')),
    ];
    while (gates.length > 0 || started.length < 7) {
      await new Promise((resolve) => setImmediate(resolve));
      gates.shift()?.();
    }
    await Promise.all(all);
    expect(started).toEqual(['flood0', 'flood1', 'honest', 'other', 'flood2', 'flood3', 'flood4']);
  });

  it('refuses work beyond the waiting cap', async () => {
    const slots = new FairSlots(1, 1);
    let release!: () => void;
    const first = slots.run('a', () => new Promise<void>((resolve) => (release = resolve)));
    const second = slots.run('a', () => Promise.resolve());
    await expect(slots.run('b', () => Promise.resolve())).rejects.toBeInstanceOf(KdfBusyError);
    release();
    await Promise.all([first, second]);
  });
});
