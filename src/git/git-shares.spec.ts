import { addressKey } from './git-client';
import { GitShares } from './git-shares';

describe('GitShares', () => {
  it('gives an address, a user and anonymous callers their shares, and an anonymous address half an address share', () => {
    const shares = new GitShares({ perAddress: 4, perUser: 2, anonymous: 3 });
    const anonymous = { address: 'ip:10.0.0.1', userId: null };
    shares.take(anonymous);
    shares.take(anonymous);
    expect(shares.fits(anonymous)).toBe(false);
    // Another anonymous address still fits until all anonymous callers hold three.
    const other = { address: 'ip:10.0.0.2', userId: null };
    expect(shares.fits(other)).toBe(true);
    shares.take(other);
    expect(shares.fits({ address: 'ip:10.0.0.3', userId: null })).toBe(false);
    // A signed-in user from the first address: the address holds 2 of 4, the user 0 of 2.
    const alice = { address: 'ip:10.0.0.1', userId: 1 };
    expect(shares.fits(alice)).toBe(true);
    shares.take(alice);
    shares.take(alice);
    expect(shares.fits(alice)).toBe(false);
    expect(shares.fits({ address: 'ip:10.0.0.9', userId: 2 })).toBe(true);
    expect(shares.held).toBe(5);
    shares.give(alice);
    expect(shares.fits(alice)).toBe(true);
    // The server's own work has no share.
    expect(shares.fits(undefined)).toBe(true);
  });

  it('counts IPv6 clients by their /64 and IPv4-mapped addresses as IPv4', () => {
    expect(addressKey('ip:2001:db8:1:2:aaaa::1')).toBe(addressKey('2001:db8:1:2:bbbb::2'));
    expect(addressKey('2001:db8:1:2::1')).not.toBe(addressKey('2001:db8:1:3::1'));
    expect(addressKey('ip:::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(addressKey('127.0.0.1')).toBe('127.0.0.1');
  });
});
