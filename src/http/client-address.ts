import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { parseCidr, plainAddress } from '../config/net-address';

/**
 * The networks whose word is taken about the client behind them (REVERSE_PROXY_TRUSTED_PROXIES): the forwarding
 * header and the reverse-proxy sign-in header are read only from a peer inside one of them. Only the forwarding
 * header the gateway is configured to write (REVERSE_PROXY_FORWARDING_HEADER) is read: a gateway passes on the
 * headers it does not write, so any other one came from the client.
 */
export class TrustedProxies {
  private readonly list = new BlockList();
  /** Answers of `has` by address: the list never changes, and a BlockList check allocates a SocketAddress. */
  private readonly known = new Map<string, boolean>();

  /** `cidrs` are validated by the configuration (`parseCidr`); a bare address is a network of one. */
  constructor(
    readonly cidrs: readonly string[],
    /** Lower-cased; `forwarded` is read as RFC 7239, any other as comma-separated addresses. */
    readonly forwardingHeader = 'x-forwarded-for',
  ) {
    for (const text of cidrs) {
      const network = parseCidr(text);
      if (network) this.list.addSubnet(network.address, network.prefix, network.family);
    }
  }

  has(address: string): boolean {
    if (this.cidrs.length === 0) return false;
    let answer = this.known.get(address);
    if (answer === undefined) {
      const plain = plainAddress(address);
      const family = isIP(plain);
      answer = family !== 0 && this.list.check(plain, family === 4 ? 'ipv4' : 'ipv6');
      if (this.known.size >= KNOWN_ADDRESSES) this.known.clear();
      this.known.set(address, answer);
    }
    return answer;
  }
}

/** How many answers TrustedProxies keeps (peers and forwarding hops seen lately). */
const KNOWN_ADDRESSES = 4096;

/**
 * The client's address: the socket's peer, or, when that peer is a trusted proxy, the right-most hop of the
 * forwarding chain (in the configured forwarding header only) that is not itself a trusted proxy. Hops left of it
 * were written by the client or by proxies nobody vouches for, so they are never believed. A hop that is not
 * an address (`unknown`, an obfuscated name) ends the walk at the last trusted one.
 */
export function resolveClientAddress(peer: string, headers: IncomingMessage['headers'], trusted: TrustedProxies): string {
  let address = plainAddress(peer);
  if (!trusted.has(address)) return address;
  const hops = forwardingChain(headers, trusted.forwardingHeader);
  for (let index = hops.length - 1; index >= 0; index--) {
    const hop = plainAddress(hops[index]);
    if (isIP(hop) === 0) return address;
    address = hop;
    if (!trusted.has(hop)) return address;
  }
  return address;
}

/** The forwarded-for hops, left (the first client) to right (the nearest proxy's peer). */
function forwardingChain(headers: IncomingMessage['headers'], header: string): string[] {
  const value = headers[header];
  if (value === undefined) return [];
  const text = Array.isArray(value) ? value.join(',') : value;
  if (header === 'forwarded') return forwardedFor(text);
  return text
    .split(',')
    .map((hop) => hop.trim())
    .filter((hop) => hop !== '');
}

/** The `for=` values of a standard `Forwarded` header, quotes, brackets and ports removed. */
function forwardedFor(header: string): string[] {
  const hops: string[] = [];
  for (const element of header.split(',')) {
    let value: string | undefined;
    for (const pair of element.split(';')) {
      const equals = pair.indexOf('=');
      if (equals > 0 && pair.slice(0, equals).trim().toLowerCase() === 'for') value = pair.slice(equals + 1).trim();
    }
    if (value === undefined) continue;
    value = value.replace(/^"(.*)"$/, '$1');
    const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
    if (bracketed) value = bracketed[1];
    else if (/^[\d.]+:\d+$/.test(value)) value = value.slice(0, value.lastIndexOf(':'));
    hops.push(value);
  }
  return hops;
}

/**
 * Resolves every request's client address once, before anything else reads it: the first middleware. Rate
 * limits, logs, git's per-address slots and the audit log read it with `clientIp`.
 */
export function clientAddresses(trusted: TrustedProxies): RequestHandler {
  return (request: Request, _response: Response, next: NextFunction) => {
    request.clientIp = resolveClientAddress(request.socket.remoteAddress ?? '', request.headers, trusted);
    next();
  };
}

/** The one client address of a request (see `clientAddresses`). */
export function clientIp(request: IncomingMessage & { clientIp?: string }): string {
  return request.clientIp ?? plainAddress(request.socket?.remoteAddress ?? '');
}
