import { isIP, type AddressInfo } from 'node:net';

/** `[::]:3000`, `127.0.0.1:2222`: an address as bound, for logs. */
export function formatAddress(address: AddressInfo): string {
  return address.family === 'IPv6' ? `[${address.address}]:${address.port}` : `${address.address}:${address.port}`;
}

/** `10.0.0.0/8`, `::1/128` or a bare address; undefined when it is neither. */
export function parseCidr(text: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address, prefixText, ...rest] = text.trim().split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return undefined;
  const longest = family === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? longest : Number(prefixText);
  if (prefix > longest) return undefined;
  return { address, prefix, family: family === 4 ? 'ipv4' : 'ipv6' };
}

/** An IPv4 client of a dual-stack socket shows as `::ffff:a.b.c.d`: the same client as `a.b.c.d`. */
export function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
