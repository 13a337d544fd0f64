import { createHmac } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookConfig } from '../config/slices';
import { OutgoingRequest, WebhookSender } from './webhook-sender';

/** The nice values of this process's threads other than the main one (Linux). */
function threadNiceValues(): number[] {
  return fs
    .readdirSync('/proc/self/task')
    .filter((tid) => Number(tid) !== process.pid)
    .map((tid) => Number(fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')[16]));
}

describe('WebhookSender', () => {
  let server: http.Server;
  let url: string;
  const received: { url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  let sender: WebhookSender;

  const config = { allowedHosts: 'loopback', workers: 4, timeoutMs: 5000, senderNice: 7 } as WebhookConfig;
  const request = (overrides: Partial<OutgoingRequest> = {}): OutgoingRequest => ({
    url,
    contentType: 'json',
    secret: 'shh',
    authorization: 'Bearer sesame',
    uuid: '6b1b0bc4-3c3e-4d6f-9d51-0c8a1f0f2d11',
    event: 'push',
    payload: '{"ref":"refs/heads/main"}',
    ...overrides,
  });

  beforeAll(async () => {
    server = http.createServer((incoming, answer) => {
      let body = '';
      incoming.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      incoming.on('end', () => {
        received.push({ url: incoming.url ?? '', headers: incoming.headers, body });
        answer.writeHead(incoming.url === '/busy' ? 503 : 200, { 'Retry-After': '7' }).end('x'.repeat(70 * 1024));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    sender = new WebhookSender(config, async () => ['127.0.0.1']);
  });

  afterAll(async () => {
    await sender.onApplicationShutdown();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends from its own thread the exact signed body, and keeps 64 KiB less one byte of the answer', async () => {
    const result = await sender.send(request());
    expect(result).toMatchObject({ delivered: true, retryable: false, status: 200 });
    expect(result.body.length).toBe(64 * 1024 - 1);
    const last = received[received.length - 1];
    expect(last.body).toBe('{"ref":"refs/heads/main"}');
    expect(last.headers.authorization).toBe('Bearer sesame');
    expect(last.headers['x-forgejo-delivery']).toBe('6b1b0bc4-3c3e-4d6f-9d51-0c8a1f0f2d11');
    // What the history shows carries neither the signatures nor the authorization.
    expect(Object.keys(result.headers)).not.toContain('Authorization');
    expect(Object.keys(result.headers)).not.toContain('X-Hub-Signature-256');
    if (process.platform === 'linux') expect(threadNiceValues()).toContain(7);
  });

  it('signs the exact bytes sent with the secret, in every family: JSON, form, GET and no secret', async () => {
    const hmac = (algorithm: string, secret: string, text: string) => createHmac(algorithm, secret).update(Buffer.from(text, 'utf8')).digest('hex');
    const expectSigned = (headers: http.IncomingHttpHeaders, secret: string, signed: string) => {
      const sha256 = secret === '' ? '' : hmac('sha256', secret, signed);
      for (const name of ['x-forgejo-signature', 'x-gitea-signature', 'x-gogs-signature']) expect(headers[name]).toBe(sha256);
      expect(headers['x-hub-signature-256']).toBe(`sha256=${sha256}`);
      expect(headers['x-hub-signature']).toBe(`sha1=${secret === '' ? '' : hmac('sha1', secret, signed)}`);
    };
    const payload = '{"ref":"refs/heads/main","message":"é & ü"}';

    await sender.send(request({ payload, secret: 's3cret' }));
    let last = received[received.length - 1];
    expect(last.body).toBe(payload);
    expect(last.headers['content-length']).toBe(String(Buffer.byteLength(payload)));
    expectSigned(last.headers, 's3cret', payload);

    await sender.send(request({ payload, secret: 's3cret', contentType: 'form' }));
    last = received[received.length - 1];
    expect(last.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(new URLSearchParams(last.body).get('payload')).toBe(payload);
    expectSigned(last.headers, 's3cret', last.body);

    await sender.send(request({ payload, secret: 's3cret', method: 'GET' }));
    last = received[received.length - 1];
    expect(last.body).toBe('');
    expect(new URL(last.url, 'http://x').searchParams.get('payload')).toBe(payload);
    expectSigned(last.headers, 's3cret', payload);

    await sender.send(request({ payload, secret: '' }));
    expectSigned(received[received.length - 1].headers, '', payload);
  });

  it('reads 5xx with Retry-After as retryable, and a refused connection as retryable', async () => {
    const busy = await sender.send(request({ url: url.replace('/hook', '/busy') }));
    expect(busy).toMatchObject({ delivered: false, retryable: true, status: 503, retryAfterMs: 7000 });
    const closed = await new Promise<number>((resolve) => {
      const probe = http.createServer().listen(0, '127.0.0.1', () => {
        const port = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(port));
      });
    });
    const refused = await sender.send(request({ url: `http://127.0.0.1:${closed}/hook` }));
    expect(refused).toMatchObject({ delivered: false, retryable: true, status: 0 });
    expect(refused.body).toMatch(/ECONNREFUSED/);
  });

  it('starts a new thread when the old one died', async () => {
    const thread = (sender as unknown as { thread: { terminate(): Promise<number> } }).thread;
    await thread.terminate();
    const result = await sender.send(request());
    expect(result).toMatchObject({ delivered: true, status: 200 });
  });

  it('refuses hosts outside WEBHOOK_ALLOWED_HOSTS before anything is sent', async () => {
    const strict = new WebhookSender({ ...config, allowedHosts: 'external' }, async () => ['127.0.0.1']);
    const before = received.length;
    const result = await strict.send(request({ url: 'http://hooks.example.test/x' }));
    expect(result).toMatchObject({ delivered: false, retryable: false, status: 0 });
    expect(result.body).toMatch(/WEBHOOK_ALLOWED_HOSTS/);
    expect(received.length).toBe(before);
    await strict.onApplicationShutdown();
  });
});
