import { createHash } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

const LFS_MEDIA_TYPE = 'application/vnd.git-lfs+json';

/**
 * An LFS server independent of Anvil (batch API, download only, basic transfer) on 127.0.0.1, port 0, for the
 * LFS objects of a source that `GitUpstream` serves. It records what it was asked for, and can serve bytes that
 * do not match an object's oid or send a download link elsewhere, so that tests can prove what a fetch took.
 */
export class LfsUpstream {
  /** The oids each batch request named, in order. */
  readonly batches: string[][] = [];
  /** The oids of the objects downloaded (GET), in order. */
  readonly downloads: string[] = [];
  baseUrl = '';
  private readonly served = new Map<string, Buffer>();
  private readonly links = new Map<string, string>();
  private readonly holds = new Map<string, { reached: () => void; release: Promise<void> }>();
  private server!: http.Server;

  static async start(): Promise<LfsUpstream> {
    const upstream = new LfsUpstream();
    upstream.server = http.createServer((request, response) => upstream.handle(request, response));
    await new Promise<void>((resolve) => upstream.server.listen(0, '127.0.0.1', resolve));
    upstream.baseUrl = `http://127.0.0.1:${(upstream.server.address() as AddressInfo).port}/lfs`;
    return upstream;
  }

  /** Serves `content` as the object it hashes to; answers its oid and size. */
  add(content: Buffer): { oid: string; size: number } {
    const oid = sha256(content);
    this.served.set(oid, content);
    return { oid, size: content.length };
  }

  /** Offers the object of `content` but sends other bytes of the same length when it is downloaded. */
  addCorrupt(content: Buffer): { oid: string; size: number } {
    const pointer = this.add(content);
    this.served.set(pointer.oid, Buffer.from(content.map((byte) => byte ^ 0xff)));
    return pointer;
  }

  /** Offers the object with a download link under `base` instead of this server. */
  linkElsewhere(oid: string, base: string): void {
    this.links.set(oid, base);
  }

  /**
   * Holds the download of `oid` until `release` is called; `reached` resolves when the download has started, so
   * that a test can act while a fetch is in the middle of it.
   */
  hold(oid: string): { reached: Promise<void>; release: () => void } {
    let reached!: () => void;
    let release!: () => void;
    const reachedPromise = new Promise<void>((resolve) => (reached = resolve));
    this.holds.set(oid, { reached, release: new Promise<void>((resolve) => (release = resolve)) });
    return { reached: reachedPromise, release };
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = new URL(request.url ?? '/', 'http://upstream').pathname;
      if (request.method === 'POST' && path === '/lfs/objects/batch') {
        const asked = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { objects: { oid: string; size: number }[] };
        this.batches.push(asked.objects.map((object) => object.oid));
        const objects = asked.objects.map(({ oid, size }) =>
          this.served.has(oid)
            ? {
                oid,
                size,
                authenticated: true,
                actions: { download: { href: `${this.links.get(oid) ?? this.baseUrl}/objects/${oid}`, header: { 'X-Upstream': 'lfs' } } },
              }
            : { oid, size, error: { code: 404, message: 'Object does not exist' } },
        );
        response.writeHead(200, { 'Content-Type': LFS_MEDIA_TYPE }).end(JSON.stringify({ transfer: 'basic', objects }));
        return;
      }
      const object = /^\/lfs\/objects\/([0-9a-f]{64})$/.exec(path);
      const content = object ? this.served.get(object[1]) : undefined;
      if (request.method === 'GET' && object && content) {
        this.downloads.push(object[1]);
        const held = this.holds.get(object[1]);
        this.holds.delete(object[1]);
        held?.reached();
        void (held?.release ?? Promise.resolve()).then(() =>
          response.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': content.length }).end(content),
        );
        return;
      }
      response.writeHead(404, { 'Content-Type': LFS_MEDIA_TYPE }).end(JSON.stringify({ message: 'Not Found' }));
    });
  }
}

function sha256(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}
