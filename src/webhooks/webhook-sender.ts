import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import * as ipaddr from 'ipaddr.js';
import { WebhookConfig } from '../config/slices';
import { HOST_RESOLVER, HostResolver } from '../outbound/host-policy';
import { AllowedHosts, parseAllowedHosts } from './allowed-hosts';
import { headerEvent } from './webhook-event-types';

/**
 * Kept of an answer's body in the history, in bytes of UTF-8: 64 KiB less one, the most a TEXT column holds on
 * MySQL/MariaDB (which refuse a longer value, failing the outcome's write).
 */
export const RESPONSE_BODY_LIMIT = 64 * 1024 - 1;

/** `text` cut to at most `limit` bytes of UTF-8, at a character boundary. */
export function keepUtf8Bytes(text: string, limit: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return text;
  let end = limit;
  // Back over the continuation bytes of a character the limit would split.
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8');
}

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

/** The sending thread's file, beside this one (copied to dist/ by the build). */
const SEND_WORKER_FILE = path.join(__dirname, 'webhook-send.worker.js');

/** What the sending thread answers for one request. */
interface ThreadAnswer {
  id: number;
  status?: number;
  body?: string;
  retryAfter?: string;
  error?: string;
  durationMs: number;
}

/**
 * Sends one delivery. The host is resolved once, every address is checked against WEBHOOK_ALLOWED_HOSTS (a
 * name allowed by a host glob passes as it is), and the connection goes to exactly the checked address, so a
 * name cannot be re-pointed between check and connect. Redirects are not followed.
 *
 * The request itself is encoded, signed and sent from a thread of its own (webhook-send.worker.js) at
 * WEBHOOK_SENDER_NICE: the bodies, their HMACs, the sockets, the HTTP parsing and the answers of hundreds of
 * deliveries a second are background work, and on Linux that thread's lower priority leaves the CPU to
 * the delivery loop, requests and pushes first. The thread starts on first use and again after it died; a request it did not
 * answer fails as a connection error would (retried).
 */
@Injectable()
export class WebhookSender implements OnApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private readonly allowed: AllowedHosts;
  private thread: Worker | null = null;
  private readonly waiting = new Map<number, (answer: ThreadAnswer) => void>();
  /** Requests handed over in this turn of the event loop: they go to the thread in one message. */
  private jobs: Record<string, unknown>[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly webhookConfig: WebhookConfig,
    @Inject(HOST_RESOLVER) private readonly resolve: HostResolver,
  ) {
    this.allowed = parseAllowedHosts(webhookConfig.allowedHosts);
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    const thread = this.thread;
    this.thread = null;
    if (thread) await thread.terminate();
    this.failWaiting('the server is shutting down');
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
    // What the history shows: the thread adds the signatures, Authorization and Content-Length to its copy.
    const headers = requestHeaders(request);
    if (get) delete headers['Content-Type'];
    const fail = (retryable: boolean, message: string, durationMs = Math.round(performance.now() - started)): AttemptResult => ({
      delivered: false,
      retryable,
      status: 0,
      body: message,
      headers,
      durationMs,
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
    const answer = await this.onThread({
      url: url.href,
      method: get ? 'GET' : 'POST',
      headers,
      payload: request.payload,
      form: request.contentType === 'form',
      secret: request.secret,
      authorization: request.authorization,
      address,
      family: ipaddr.parse(address).kind() === 'ipv6' ? 6 : 4,
      timeoutMs: this.webhookConfig.timeoutMs,
      connectTimeoutMs: this.webhookConfig.connectTimeoutMs,
      firstByteTimeoutMs: this.webhookConfig.firstByteTimeoutMs,
      keepBytes: RESPONSE_BODY_LIMIT,
    });
    if (answer.error !== undefined) return fail(true, answer.error, answer.durationMs);
    const status = answer.status ?? 0;
    return {
      delivered: status >= 200 && status < 300,
      retryable: status >= 500 || status === 429,
      retryAfterMs: retryAfterMs(answer.retryAfter),
      status,
      body: keepUtf8Bytes(answer.body ?? '', RESPONSE_BODY_LIMIT),
      headers,
      durationMs: answer.durationMs,
    };
  }

  /** Hands one request to the sending thread; an answer that does not come in time is a retryable failure. */
  private onThread(job: Record<string, unknown>): Promise<ThreadAnswer> {
    const id = this.nextId++;
    return new Promise<ThreadAnswer>((resolve) => {
      // The thread enforces the timeout; this one only covers a thread that stopped answering.
      const timer = setTimeout(
        () => finish({ id, error: 'the sending thread did not answer', durationMs: this.webhookConfig.timeoutMs }),
        this.webhookConfig.timeoutMs + 5000,
      );
      timer.unref();
      const finish = (answer: ThreadAnswer) => {
        clearTimeout(timer);
        if (this.waiting.delete(id)) resolve(answer);
      };
      this.waiting.set(id, finish);
      if (this.jobs.length === 0) setImmediate(() => this.handOver());
      this.jobs.push({ id, ...job });
    });
  }

  /** The requests of one turn, to the thread in one message (each message wakes it). */
  private handOver(): void {
    const jobs = this.jobs;
    this.jobs = [];
    try {
      this.sendingThread().postMessage(jobs);
    } catch (error) {
      for (const job of jobs)
        this.waiting.get(job.id as number)?.({
          id: job.id as number,
          error: `the sending thread is not available: ${(error as Error).message}`,
          durationMs: 0,
        });
    }
  }

  private sendingThread(): Worker {
    if (this.thread) return this.thread;
    if (this.closed) throw new Error('the server is shutting down');
    const thread = new Worker(SEND_WORKER_FILE, {
      workerData: { nice: this.webhookConfig.senderNice, maxSockets: this.webhookConfig.workers },
      resourceLimits: { maxOldGenerationSizeMb: 64 },
    });
    thread.unref();
    thread.on('message', (answers: ThreadAnswer[]) => {
      for (const answer of answers) this.waiting.get(answer.id)?.(answer);
    });
    const gone = (reason: string) => {
      if (this.thread !== thread) return;
      this.thread = null;
      this.logger.warn(`the webhook sending thread stopped (${reason}); requests in flight will be retried`);
      this.failWaiting(`the sending thread stopped: ${reason}`);
    };
    thread.on('error', (error) => gone(error.message));
    thread.on('exit', (code) => gone(`exit code ${code}`));
    this.thread = thread;
    return thread;
  }

  private failWaiting(message: string): void {
    for (const [id, finish] of [...this.waiting]) finish({ id, error: message, durationMs: 0 });
  }
}

/**
 * Forgejo's header families without their signatures: the sending thread signs the exact body bytes with the
 * hook's secret (`X-*-Signature`, `X-Hub-Signature`, `X-Hub-Signature-256`) off the thread that answers requests.
 */
export function requestHeaders(request: Pick<OutgoingRequest, 'contentType' | 'uuid' | 'event'>): Record<string, string> {
  const headers: Record<string, string> = {
    'Content-Type': request.contentType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json',
    'User-Agent': 'Anvil-Webhook',
  };
  for (const family of ['Forgejo', 'Gitea', 'Gogs']) {
    headers[`X-${family}-Delivery`] = request.uuid;
    headers[`X-${family}-Event`] = headerEvent(request.event);
    headers[`X-${family}-Event-Type`] = request.event;
  }
  headers['X-GitHub-Delivery'] = request.uuid;
  headers['X-GitHub-Event'] = headerEvent(request.event);
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
