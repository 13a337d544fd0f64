import type { AddressInfo } from 'node:net';

/** `[::]:3000`, `127.0.0.1:2222`: an address as bound, for logs. */
export function formatAddress(address: AddressInfo): string {
  return address.family === 'IPv6' ? `[${address.address}]:${address.port}` : `${address.address}:${address.port}`;
}
