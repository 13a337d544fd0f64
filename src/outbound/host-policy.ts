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
 * special-purpose range, never allowed. IPv4-mapped (and NAT64-embedded) IPv6 addresses are judged as the IPv4
 * address they carry; 6to4 and Teredo, which tunnel to an address the policy cannot see, are refused.
 */
export function classifyAddress(text: string): AddressClass {
  if (!ipaddr.isValid(text)) return 'refused';
  let address = ipaddr.process(text);
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).range() === 'rfc6052') {
    const bytes = (address as ipaddr.IPv6).toByteArray().slice(12);
    address = ipaddr.fromByteArray(bytes);
  }
  const range = address.range();
  if (address.kind() === 'ipv4') {
    if (range === 'unicast') return 'external';
    if (range === 'loopback' || range === 'private') return 'local';
    return 'refused';
  }
  if (range === 'unicast') return 'external';
  if (range === 'loopback' || range === 'uniqueLocal') return 'local';
  return 'refused';
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
