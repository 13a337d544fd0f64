import * as ipaddr from 'ipaddr.js';
import { classifyAddress, judgedAddress } from '../outbound/host-policy';

/**
 * WEBHOOK_ALLOWED_HOSTS, in the grammar of Forgejo's ALLOWED_HOST_LIST: comma-separated `loopback`,
 * `private` (RFC 1918 and IPv6 unique local), `external` (global unicast), `*` (any address), CIDRs matched
 * against the resolved addresses, and host-name globs matched against the name in the URL.
 */
export interface AllowedHosts {
  /** Whether a host name is allowed by one of the name globs (then its addresses are not checked). */
  allowsName(host: string): boolean;
  allowsAddress(address: string): boolean;
}

export function parseAllowedHosts(setting: string): AllowedHosts {
  const builtins = new Set<string>();
  const cidrs: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
  const globs: RegExp[] = [];
  for (const raw of setting.split(',')) {
    const item = raw.trim().toLowerCase();
    if (item === '') continue;
    if (['loopback', 'private', 'external', '*'].includes(item)) builtins.add(item);
    else if (item.includes('/') && isCidr(item)) cidrs.push(ipaddr.parseCIDR(item));
    else if (/^[a-z0-9*?.\-\[\]:]+$/.test(item))
      globs.push(
        new RegExp(
          `^${item
            .replace(/[.\-\[\]]/g, '\\$&')
            .replace(/\*/g, '.*')
            .replace(/\?/g, '.')}$`,
        ),
      );
    else throw new Error(`WEBHOOK_ALLOWED_HOSTS: "${item}" is not loopback, private, external, *, a CIDR or a host name`);
  }
  return {
    allowsName: (host) => globs.some((glob) => glob.test(host.toLowerCase())),
    allowsAddress: (text) => {
      if (!ipaddr.isValid(text)) return false;
      if (builtins.has('*')) return true;
      // An IPv6 address carrying an IPv4 one (mapped, compatible, NAT64, …) is the IPv4 address for every rule.
      const address = judgedAddress(text);
      const range = address.range();
      if (builtins.has('loopback') && range === 'loopback') return true;
      if (builtins.has('private') && (range === 'private' || range === 'uniqueLocal')) return true;
      if (builtins.has('external') && classifyAddress(text) === 'external') return true;
      return cidrs.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));
    },
  };
}

function isCidr(item: string): boolean {
  try {
    ipaddr.parseCIDR(item);
    return true;
  } catch {
    return false;
  }
}
