import { verificationToken } from './verification-token';

describe('verificationToken', () => {
  const owner = { id: 7, name: 'alice', email: 'alice@example.com', createdUnix: 1_700_000_000 };
  const minute = 1_800_000_000; // a window start

  it('is 64 lowercase hex digits', () => {
    expect(verificationToken(owner, minute, 1)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('stays the same within a one-minute window and changes with the next one', () => {
    expect(verificationToken(owner, minute + 59, 0)).toBe(verificationToken(owner, minute, 0));
    expect(verificationToken(owner, minute + 60, 0)).not.toBe(verificationToken(owner, minute, 0));
  });

  it('hands out the next window, which is the current one a minute later', () => {
    expect(verificationToken(owner, minute + 10, 1)).toBe(verificationToken(owner, minute + 70, 0));
    expect(verificationToken(owner, minute + 10, 1)).not.toBe(verificationToken(owner, minute + 10, 0));
  });

  it.each([
    ['id', { id: 8 }],
    ['name', { name: 'bob' }],
    ['email', { email: 'other@example.com' }],
    ['creation time', { createdUnix: 1_700_000_001 }],
  ])('depends on the owner’s %s', (_field, change) => {
    expect(verificationToken({ ...owner, ...change }, minute, 0)).not.toBe(verificationToken(owner, minute, 0));
  });
});
