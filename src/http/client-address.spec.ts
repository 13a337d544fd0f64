import { parseCidr } from '../config/net-address';
import { resolveClientAddress, TrustedProxies } from './client-address';

describe('the client address behind trusted proxies', () => {
  const trusted = new TrustedProxies(['127.0.0.0/8', '::1/128', '10.1.0.0/16']);

  it('believes no forwarding header from a peer that is not a trusted proxy', () => {
    expect(resolveClientAddress('192.0.2.9', { 'x-forwarded-for': '198.51.100.1' }, trusted)).toBe('192.0.2.9');
    expect(resolveClientAddress('::ffff:192.0.2.9', { forwarded: 'for=198.51.100.1' }, trusted)).toBe('192.0.2.9');
  });

  it('takes the right-most hop that is not a trusted proxy', () => {
    expect(resolveClientAddress('127.0.0.1', { 'x-forwarded-for': '6.6.6.6, 198.51.100.1, 10.1.2.3' }, trusted)).toBe('198.51.100.1');
    expect(resolveClientAddress('::ffff:127.0.0.1', { 'x-forwarded-for': '198.51.100.2' }, trusted)).toBe('198.51.100.2');
    expect(resolveClientAddress('::1', { 'x-forwarded-for': ['6.6.6.6', '2001:db8::7'] }, trusted)).toBe('2001:db8::7');
  });

  it('reads only the configured header: X-Forwarded-For by default, a client’s Forwarded ignored', () => {
    const headers = { forwarded: 'for=6.6.6.6', 'x-forwarded-for': '198.51.100.4' };
    expect(resolveClientAddress('127.0.0.1', headers, trusted)).toBe('198.51.100.4');
    expect(resolveClientAddress('127.0.0.1', { forwarded: 'for=6.6.6.6' }, trusted)).toBe('127.0.0.1');
  });

  it('reads Forwarded (RFC 7239) when configured, quotes, brackets and ports removed, X-Forwarded-For ignored', () => {
    const byForwarded = new TrustedProxies(['127.0.0.0/8', '::1/128', '10.1.0.0/16'], 'forwarded');
    const headers = { forwarded: 'for=6.6.6.6, for="[2001:db8:cafe::17]:4711";proto=https, for=10.1.0.9:80', 'x-forwarded-for': '6.6.6.6' };
    expect(resolveClientAddress('127.0.0.1', headers, byForwarded)).toBe('2001:db8:cafe::17');
    expect(resolveClientAddress('127.0.0.1', { 'x-forwarded-for': '6.6.6.6' }, byForwarded)).toBe('127.0.0.1');
    const byRealIp = new TrustedProxies(['127.0.0.0/8'], 'x-real-ip');
    expect(resolveClientAddress('127.0.0.1', { 'x-real-ip': '198.51.100.9', 'x-forwarded-for': '6.6.6.6' }, byRealIp)).toBe('198.51.100.9');
  });

  it('stops at a hop that is no address, keeping the last trusted one', () => {
    expect(resolveClientAddress('127.0.0.1', { 'x-forwarded-for': 'unknown, 10.1.0.4' }, trusted)).toBe('10.1.0.4');
    expect(resolveClientAddress('127.0.0.1', { forwarded: 'for=_hidden' }, new TrustedProxies(['127.0.0.0/8'], 'forwarded'))).toBe('127.0.0.1');
    expect(resolveClientAddress('127.0.0.1', {}, trusted)).toBe('127.0.0.1');
  });

  it('trusts nobody with an empty list, and parses only real CIDRs', () => {
    expect(resolveClientAddress('127.0.0.1', { 'x-forwarded-for': '198.51.100.1' }, new TrustedProxies([]))).toBe('127.0.0.1');
    expect(parseCidr('10.0.0.0/8')).toEqual({ address: '10.0.0.0', prefix: 8, family: 'ipv4' });
    expect(parseCidr('::1')).toEqual({ address: '::1', prefix: 128, family: 'ipv6' });
    for (const bad of ['10.0.0.0/33', 'example.com', '10.0.0.0/8/1', '10.0.0.0/x', '']) expect(parseCidr(bad)).toBeUndefined();
  });
});
