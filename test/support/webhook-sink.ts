import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a sink received: its path, lower-cased headers and exact body bytes. */
export interface SinkRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The JSON payload (the body, or the form's `payload` field). */
  json: Record<string, any>;
  /** When it arrived (ms since the epoch). */
  receivedAt?: number;
}

/**
 * A real HTTP receiver on 127.0.0.1 for webhook tests. `answer` decides the status per request (default 200);
 * `waitFor` resolves once a condition over the received requests holds (no fixed sleeps).
 */
export class WebhookSink {
  readonly requests: SinkRequest[] = [];
  answer: (request: SinkRequest, index: number) => { status: number; headers?: Record<string, string>; body?: string } = () => ({ status: 200 });
  private server!: http.Server;
  private waiters: (() => void)[] = [];
  url = '';
  port = 0;

  async start(port = 0): Promise<this> {
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks);
        const text = body.toString('utf8');
        let json: Record<string, any> = {};
        try {
          json = JSON.parse(text.startsWith('payload=') ? (new URLSearchParams(text).get('payload') ?? '') : text);
        } catch {
          json = {};
        }
        const received: SinkRequest = { method: request.method ?? '', path: request.url ?? '/', headers: request.headers, body, json };
        const index = this.requests.push(received) - 1;
        received.receivedAt = Date.now();
        const { status, headers, body: answer } = this.answer(received, index);
        response.writeHead(status, { 'Content-Type': 'text/plain', ...(headers ?? {}) });
        response.end(answer ?? `sink answer ${status}`);
        for (const waiter of this.waiters.splice(0)) waiter();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', () => resolve()));
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `http://127.0.0.1:${this.port}`;
    return this;
  }

  /**
   * Waits until `condition` holds. The limit is a ceiling below jest's test timeout, not a speed: the delivery
   * process runs at the lowest priority, so on a machine loaded by other test runs its start takes whatever CPU
   * they leave it.
   */
  async waitFor(condition: (requests: SinkRequest[]) => boolean, what = 'requests', limitMs = 150_000): Promise<void> {
    const deadline = Date.now() + limitMs;
    while (!condition(this.requests)) {
      if (Date.now() > deadline) throw new Error(`sink: gave up waiting for ${what}; got ${this.requests.length} requests`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A loopback port nothing listens on (taken and released at once). */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
