import { createHmac } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import * as ipaddr from 'ipaddr.js';
import { WebhookConfig } from '../config/slices';
import { HOST_RESOLVER, HostResolver } from '../mirrors/host-policy';
import { AllowedHosts, parseAllowedHosts } from './allowed-hosts';

/** Kept of an answer's body in the history. */
export const RESPONSE_BODY_LIMIT = 64 * 1024;

/** What one request needs: where, how, and the secrets already opened. */
export interface OutgoingRequest {
  url: string;
  contentType: 'json' | 'form';
  /** POST, or GET: the payload then goes as the `payload` query parameter, with no body. */
  method?: 'POST' | 'GET';
  secret: string;
  authorization: string;
  uuid: string;
  event: string;
  /** The JSON payload; sent as is (json) or as `payload=<json>` (form). */
  payload: string;
}

export interface AttemptResult {
  delivered: boolean;
  /** Worth another attempt (connection error, timeout, 5xx, 429); false for other answers and refused hosts. */
  retryable: boolean;
  /** From Retry-After, when the answer had one. */
  retryAfterMs?: number;
  status: number;
  body: string;
  /** The request's headers without the signatures and Authorization. */
  headers: Record<string, string>;
  durationMs: number;
}

/** Thrown for a URL whose host the policy refuses: the delivery fails without retries. */
export class RefusedHostError extends Error {}

/**
 * Sends one delivery. The host is resolved once, every address is checked against WEBHOOK_ALLOWED_HOSTS (a
 * name allowed by a host glob passes as it is), and the connection goes to exactly the checked address, so a
 * name cannot be re-pointed between check and connect. Redirects are not followed.
 */
@Injectable()
export class WebhookSender implements OnApplicationShutdown {
  private readonly allowed: AllowedHosts;
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(
    private readonly webhookConfig: WebhookConfig,
    @Inject(HOST_RESOLVER) private readonly resolve: HostResolver,
  ) {
    this.allowed = parseAllowedHosts(webhookConfig.allowedHosts);
    this.httpAgent = new http.Agent({ keepAlive: true, maxSockets: webhookConfig.workers });
    this.httpsAgent = new https.Agent({ keepAlive: true, maxSockets: webhookConfig.workers });
  }

  onApplicationShutdown(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /** The address to connect to, or RefusedHostError; an unresolvable name is a retryable failure. */
  async vet(url: URL): Promise<string> {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const addresses = ipaddr.isValid(host) ? [host] : await this.resolve(host);
    if (addresses.length === 0) throw new Error(`${host} does not resolve`);
    if (!this.allowed.allowsName(host) && !addresses.every((address) => this.allowed.allowsAddress(address))) {
      throw new RefusedHostError(`webhook can only call allowed HTTP servers (check your WEBHOOK_ALLOWED_HOSTS setting), deny '${host}'`);
    }
    return addresses[0];
  }

  async send(request: OutgoingRequest): Promise<AttemptResult> {
    const started = performance.now();
    const get = request.method === 'GET';
    const body = get ? Buffer.alloc(0) : Buffer.from(request.contentType === 'form' ? `payload=${encodeURIComponent(request.payload)}` : request.payload, 'utf8');
    // A GET has no body: its signatures are of the JSON payload, as Forgejo signs it.
    const headers = signedHeaders(request, get ? Buffer.from(request.payload, 'utf8') : body);
    if (get) delete headers['Content-Type'];
    const shown = { ...headers };
    for (const name of ['X-Forgejo-Signature', 'X-Gitea-Signature', 'X-Gogs-Signature', 'X-Hub-Signature', 'X-Hub-Signature-256']) delete shown[name];
    const fail = (retryable: boolean, message: string): AttemptResult => ({
      delivered: false,
      retryable,
      status: 0,
      body: message,
      headers: shown,
      durationMs: Math.round(performance.now() - started),
    });
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return fail(false, 'invalid URL');
    }
    if (get) url.searchParams.set('payload', request.payload);
    let address: string;
    try {
      address = await this.vet(url);
    } catch (error) {
      return fail(!(error instanceof RefusedHostError), (error as Error).message);
    }
    if (request.authorization !== '') headers.Authorization = request.authorization;
    return new Promise<AttemptResult>((resolve) => {
      const family = ipaddr.parse(address).kind() === 'ipv6' ? 6 : 4;
      const lookup = ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
        if (options?.all) callback(null, [{ address, family }]);
        else callback(null, address, family);
      }) as unknown as LookupFunction;
      const secure = url.protocol === 'https:';
      const timer = setTimeout(() => outgoing.destroy(new Error(`timed out after ${this.webhookConfig.timeoutMs} ms`)), this.webhookConfig.timeoutMs);
      let settled = false;
      const settle = (result: AttemptResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const outgoing = (secure ? https : http).request(
        url,
        { method: get ? 'GET' : 'POST', headers: get ? headers : { ...headers, 'Content-Length': String(body.length) }, lookup, agent: secure ? this.httpsAgent : this.httpAgent },
        (response) => {
          const chunks: Buffer[] = [];
          let kept = 0;
          response.on('data', (chunk: Buffer) => {
            if (kept < RESPONSE_BODY_LIMIT) {
              chunks.push(chunk.subarray(0, RESPONSE_BODY_LIMIT - kept));
              kept += Math.min(chunk.length, RESPONSE_BODY_LIMIT - kept);
            }
          });
          response.on('error', (error) => settle(fail(true, error.message)));
          response.on('end', () => {
            const status = response.statusCode ?? 0;
            settle({
              delivered: status >= 200 && status < 300,
              retryable: status >= 500 || status === 429,
              retryAfterMs: retryAfterMs(response.headers['retry-after']),
              status,
              body: Buffer.concat(chunks).toString('utf8'),
              headers: shown,
              durationMs: Math.round(performance.now() - started),
            });
          });
        },
      );
      outgoing.on('error', (error) => settle(fail(true, error.message)));
      outgoing.end(body);
    });
  }
}

/** Forgejo's header families; every signature is an HMAC of the exact body bytes with the hook's secret. */
export function signedHeaders(request: Pick<OutgoingRequest, 'contentType' | 'secret' | 'uuid' | 'event'>, body: Buffer): Record<string, string> {
  const sha1 = request.secret === '' ? '' : createHmac('sha1', request.secret).update(body).digest('hex');
  const sha256 = request.secret === '' ? '' : createHmac('sha256', request.secret).update(body).digest('hex');
  const headers: Record<string, string> = {
    'Content-Type': request.contentType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json',
    'User-Agent': 'Anvil-Webhook',
  };
  for (const family of ['Forgejo', 'Gitea', 'Gogs']) {
    headers[`X-${family}-Delivery`] = request.uuid;
    headers[`X-${family}-Event`] = request.event;
    headers[`X-${family}-Event-Type`] = request.event;
    headers[`X-${family}-Signature`] = sha256;
  }
  headers['X-Hub-Signature'] = `sha1=${sha1}`;
  headers['X-Hub-Signature-256'] = `sha256=${sha256}`;
  headers['X-GitHub-Delivery'] = request.uuid;
  headers['X-GitHub-Event'] = request.event;
  headers['X-GitHub-Event-Type'] = request.event;
  return headers;
}

/** Retry-After in seconds or as an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
