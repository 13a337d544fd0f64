import * as dns from 'node:dns';
import { Inject, Injectable } from '@nestjs/common';
import * as ipaddr from 'ipaddr.js';
import { InvalidInputError } from '../common/errors';
import { NetworkConfig } from '../config/slices';

export const DISALLOWED_HOST = 'You can not import from disallowed hosts.';

/** The address was refused by the host policy (docs/mirrors.md). */
export class DisallowedHostError extends InvalidInputError {
  constructor() {
    super(DISALLOWED_HOST);
  }
}

export type AddressClass = 'external' | 'local' | 'refused';

/**
 * How the policy sees one address. `external`: global unicast. `local`: loopback and private ranges, allowed
 * only with ALLOW_LOCAL_NETWORKS. `refused`: unspecified, link-local, multicast, broadcast and every other
 * special-purpose range, never allowed. An IPv6 address that carries an IPv4 address (see `embeddedIPv4`) is
 * judged as the IPv4 address it carries; 6to4 and Teredo, which tunnel to an address the policy cannot see, are
 * refused.
 */
export function classifyAddress(text: string): AddressClass {
  if (!ipaddr.isValid(text)) return 'refused';
  const address = ipaddr.parse(text);
  if (address.kind() === 'ipv4') return classifyIPv4(address as ipaddr.IPv4);
  const v6 = address as ipaddr.IPv6;
  const carried = embeddedIPv4(v6);
  if (carried) {
    const inner = classifyIPv4(carried.address);
    // An ISATAP interface id sits under a prefix of its own: the stricter of the two decides.
    return carried.underPrefix ? stricter(inner, classifyIPv6(v6)) : inner;
  }
  return classifyIPv6(v6);
}

function classifyIPv4(address: ipaddr.IPv4): AddressClass {
  const range = address.range();
  if (range === 'unicast') return 'external';
  if (range === 'loopback' || range === 'private') return 'local';
  return 'refused';
}

function classifyIPv6(address: ipaddr.IPv6): AddressClass {
  const range = address.range();
  if (range === 'unicast') return 'external';
  if (range === 'loopback' || range === 'uniqueLocal') return 'local';
  return 'refused';
}

const STRICTNESS: Record<AddressClass, number> = { external: 0, local: 1, refused: 2 };

function stricter(a: AddressClass, b: AddressClass): AddressClass {
  return STRICTNESS[a] >= STRICTNESS[b] ? a : b;
}

/**
 * The IPv4 address an IPv6 address carries, by every embedding a host or a translator may route to it:
 * IPv4-mapped (`::ffff:0:0/96`), IPv4-compatible (`::/96`, but `::` and `::1` themselves), IPv4-translated
 * (`::ffff:0:0:0/96`), NAT64 (`64:ff9b::/96`, and the local-use `64:ff9b:1::/48` with its address split around
 * the reserved octet) and an ISATAP interface id (`…:0:5efe:a.b.c.d`, `…:200:5efe:a.b.c.d`). Undefined for any
 * other address.
 */
export function embeddedIPv4(address: ipaddr.IPv6): { address: ipaddr.IPv4; underPrefix: boolean } | undefined {
  const bytes = address.toByteArray();
  const last = () => ipaddr.fromByteArray(bytes.slice(12)) as ipaddr.IPv4;
  const zero = (from: number, to: number) => bytes.slice(from, to).every((byte) => byte === 0);
  if (zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return { address: last(), underPrefix: false };
  if (zero(0, 12)) {
    // `::` and `::1` are IPv6's own unspecified and loopback addresses.
    if (zero(12, 15) && bytes[15] <= 1) return undefined;
    return { address: last(), underPrefix: false };
  }
  if (zero(0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zero(10, 12)) return { address: last(), underPrefix: false };
  const nat64 = bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b;
  if (nat64 && zero(4, 12)) return { address: last(), underPrefix: false };
  if (nat64 && bytes[4] === 0x00 && bytes[5] === 0x01) {
    return { address: ipaddr.fromByteArray([bytes[6], bytes[7], bytes[9], bytes[10]]) as ipaddr.IPv4, underPrefix: false };
  }
  if ((bytes[8] & ~0x03) === 0 && bytes[9] === 0 && bytes[10] === 0x5e && bytes[11] === 0xfe) return { address: last(), underPrefix: true };
  return undefined;
}

/** The address the policy judges: the IPv4 address an IPv6 one carries (`embeddedIPv4`), else itself. */
export function judgedAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const address = ipaddr.parse(text);
  if (address.kind() === 'ipv4') return address;
  return embeddedIPv4(address as ipaddr.IPv6)?.address ?? address;
}

/** The resolver, behind one small adapter so that a test can answer for names it does not own. */
export const HOST_RESOLVER = Symbol('HOST_RESOLVER');
export type HostResolver = (host: string) => Promise<string[]>;

export const systemResolver: HostResolver = async (host) => {
  const answers = await dns.promises.lookup(host, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
};

/** A source that passed the policy: its host, port and every address it resolved to at that moment. */
export interface VettedSource {
  url: URL;
  host: string;
  port: number;
  addresses: string[];
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443, 'git:': 9418 };

/**
 * Host policy (docs/mirrors.md): the host is resolved (A and AAAA, or taken as it is when it
 * is an IP literal) and allowed only when every address is. It is asked before the clone and again before every
 * sync. The addresses it vetted are handed to git (`http.curloptResolve`) so that an HTTP(S) fetch connects to
 * exactly them, whatever the name resolves to a moment later (DNS rebinding). `git://` cannot be pinned that
 * way: there the window between this check and git's own lookup remains (docs/mirrors.md).
 */
@Injectable()
export class HostPolicy {
  constructor(
    private readonly networkConfig: NetworkConfig,
    @Inject(HOST_RESOLVER) private readonly resolve: HostResolver,
  ) {}

  async vet(url: URL): Promise<VettedSource> {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    let addresses: string[];
    if (ipaddr.isValid(host)) {
      addresses = [host];
    } else {
      try {
        addresses = await this.resolve(host);
      } catch {
        addresses = [];
      }
    }
    // A name that does not resolve matches nothing the policy allows.
    if (addresses.length === 0) throw new DisallowedHostError();
    for (const address of addresses) {
      const kind = classifyAddress(address);
      if (kind === 'refused' || (kind === 'local' && !this.networkConfig.allowLocalNetworks)) throw new DisallowedHostError();
    }
    const port = url.port === '' ? DEFAULT_PORTS[url.protocol] : Number(url.port);
    return { url, host, port, addresses };
  }
}
