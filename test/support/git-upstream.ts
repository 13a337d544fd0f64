import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

export type UpstreamMode =
  /** Serves every repository under its root. */
  | { kind: 'open' }
  /** Answers 401 unless the request carries these Basic credentials. */
  | { kind: 'basic'; username: string; password: string }
  /** Answers every request with a 301 to `location`. */
  | { kind: 'redirect'; location: string }
  /** Accepts every request and never answers (until closed). */
  | { kind: 'stall' };

export interface SeenRequest {
  method: string;
  url: string;
  authorization?: string;
}

/**
 * A git server independent of Anvil: `git http-backend` (CGI) behind a tiny node wrapper on 127.0.0.1, port 0.
 * It records every request it receives, so that tests can prove what was (not) contacted and with which
 * credentials.
 */
export class GitUpstream {
  readonly root: string;
  readonly seen: SeenRequest[] = [];
  /** Requests being answered by git now, and the most there ever were at once. */
  inFlight = 0;
  peakInFlight = 0;
  /** Stalled requests whose client (Anvil's git) has closed the connection. */
  stallsClosedByClient = 0;
  private server!: http.Server;
  private readonly stalled = new Set<http.ServerResponse>();
  baseUrl = '';

  private constructor(private mode: UpstreamMode) {
    this.root = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-upstream-'));
  }

  static async start(mode: UpstreamMode = { kind: 'open' }): Promise<GitUpstream> {
    const upstream = new GitUpstream(mode);
    upstream.server = http.createServer((request, response) => upstream.handle(request, response));
    await new Promise<void>((resolve) => upstream.server.listen(0, '127.0.0.1', resolve));
    upstream.baseUrl = `http://127.0.0.1:${(upstream.server.address() as AddressInfo).port}/`;
    return upstream;
  }

  /** Changes how the server answers from the next request on (e.g. a source that starts to stall). */
  setMode(mode: UpstreamMode): void {
    this.mode = mode;
  }

  /** The URL of repository `name` (a bare directory `<root>/<name>.git`). */
  url(name: string): string {
    return `${this.baseUrl}${name}.git`;
  }

  dir(name: string): string {
    return path.join(this.root, `${name}.git`);
  }

  /** Cuts every stalled exchange (the clients see their connection close). */
  releaseStalled(): void {
    const stalled = [...this.stalled];
    this.stalled.clear();
    for (const response of stalled) response.destroy();
  }

  async close(): Promise<void> {
    this.releaseStalled();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    fs.rmSync(this.root, { recursive: true, force: true });
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    this.seen.push({ method: request.method ?? '', url: request.url ?? '', authorization: request.headers.authorization });
    switch (this.mode.kind) {
      case 'stall':
        this.stalled.add(response);
        request.resume();
        response.on('close', () => {
          if (this.stalled.delete(response)) this.stallsClosedByClient += 1;
        });
        return;
      case 'redirect':
        request.resume();
        response.writeHead(301, { Location: `${this.mode.location}${request.url ?? ''}` }).end();
        return;
      case 'basic': {
        const expected = `Basic ${Buffer.from(`${this.mode.username}:${this.mode.password}`).toString('base64')}`;
        if (request.headers.authorization !== expected) {
          request.resume();
          response.writeHead(401, { 'WWW-Authenticate': 'Basic realm="upstream"' }).end('authentication required\n');
          return;
        }
        return this.cgi(request, response, this.mode.username);
      }
      default:
        return this.cgi(request, response);
    }
  }

  private cgi(request: http.IncomingMessage, response: http.ServerResponse, remoteUser?: string): void {
    const url = new URL(request.url ?? '/', 'http://upstream');
    const child = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: this.root,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_PROJECT_ROOT: this.root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.replace(/^\?/, ''),
        REQUEST_METHOD: request.method ?? 'GET',
        CONTENT_TYPE: request.headers['content-type'] ?? '',
        ...(request.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(request.headers['content-encoding']) } : {}),
        ...(request.headers['git-protocol'] ? { GIT_PROTOCOL: String(request.headers['git-protocol']) } : {}),
        ...(remoteUser ? { REMOTE_USER: remoteUser } : {}),
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    this.inFlight += 1;
    this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
    child.on('close', () => {
      this.inFlight -= 1;
    });
    request.pipe(child.stdin);
    child.stdin.on('error', () => undefined);
    let head = Buffer.alloc(0);
    let headersDone = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) return void response.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
        else response.setHeader(name, value);
      }
      response.statusCode = status;
      response.write(head.subarray(end + 4));
    });
    child.on('close', () => response.end());
  }
}
