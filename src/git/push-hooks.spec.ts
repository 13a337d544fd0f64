import { isSafeGitProtocol } from './git-processes';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { hookScript, isZeroId, parseHookBody, parseRefUpdates } from './push-hooks';

describe('hook input', () => {
  it('parses the ref lines git gives pre-receive and post-receive', () => {
    const zero = '0'.repeat(40);
    const id = 'a'.repeat(40);
    expect(parseRefUpdates(`${zero} ${id} refs/heads/main\n${id} ${zero} refs/tags/v1\n\n`)).toEqual([
      { oldId: zero, newId: id, ref: 'refs/heads/main' },
      { oldId: id, newId: zero, ref: 'refs/tags/v1' },
    ]);
  });

  it('knows the zero id of both object formats', () => {
    expect(isZeroId('0'.repeat(40))).toBe(true);
    expect(isZeroId('0'.repeat(64))).toBe(true);
    expect(isZeroId(`${'0'.repeat(39)}1`)).toBe(false);
  });
});

describe('isSafeGitProtocol (Forgejo safeGitProtocolHeader)', () => {
  it.each(['version=2', 'version=1', 'version=2:object-format=sha256'.replace('-', '')])('passes %s', (value) => {
    expect(isSafeGitProtocol(value)).toBe(true);
  });

  it.each(['', 'version=2;x', 'version', 'version=2:', 'version=2\nX=1', 'a b=c'])('ignores %j', (value) => {
    expect(isSafeGitProtocol(value)).toBe(false);
  });

  it('reads the quarantine variables, each ended by a NUL byte, then the ref lines; refuses a body without them', () => {
    const body = Buffer.concat([Buffer.from('/d/objects/tmp_objdir-incoming-ü\0\0/d/objects/tmp_objdir-incoming-ü\0'), Buffer.from('a b refs/heads/main\n')]);
    expect(parseHookBody(body)).toEqual({
      objects: { GIT_OBJECT_DIRECTORY: '/d/objects/tmp_objdir-incoming-ü', GIT_QUARANTINE_PATH: '/d/objects/tmp_objdir-incoming-ü' },
      refLines: 'a b refs/heads/main\n',
    });
    expect(parseHookBody(Buffer.from('a b refs/heads/main\n'))).toBeNull();
  });
});

describe.each([
  ['sh and curl', undefined],
  ['bash', '/bin/bash'],
])('the hook script (%s)', (_variant, bash) => {
  let server: http.Server;
  let received: { body: Buffer; token: unknown; version: string }[];
  let url: string;
  let port: string;
  let dir: string;

  beforeAll(async () => {
    received = [];
    server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks);
        received.push({ body, token: request.headers['x-anvil-push'], version: request.httpVersion });
        if (body.includes('refs/heads/refused')) response.writeHead(403).end('branch refused');
        else response.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = String((server.address() as AddressInfo).port);
    url = `http://127.0.0.1:${port}/`;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-hook-'));
    const script = hookScript('pre-receive', process.execPath, path.join(__dirname, 'push-hook.worker.js'), bash);
    fs.writeFileSync(path.join(dir, 'pre-receive'), script, { mode: 0o755 });
    fs.mkdirSync(path.join(dir, 'empty'));
  });
  afterAll(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await new Promise((resolve) => server.close(resolve));
  });

  const runHook = (env: Record<string, string>, input: string | Buffer) =>
    new Promise<{ code: number; stderr: string }>((resolve) => {
      const child = execFile(path.join(dir, 'pre-receive'), { env: { PATH: process.env.PATH ?? '', ...env } }, (error, _stdout, stderr) =>
        resolve({ code: error ? Number(error.code) : 0, stderr }),
      );
      // A hook that refuses before reading its input closes the pipe.
      child.stdin!.on('error', () => undefined);
      child.stdin!.end(input);
    });
  const token = 'f'.repeat(64);

  it('posts the quarantine variables and ref lines with the push token, and prints a refusal as Anvil: <message>', async () => {
    received.length = 0;
    const quarantine = '/data/objects/tmp_objdir-incoming-ü';
    const accepted = await runHook(
      { ANVIL_HOOK_URL: url, ANVIL_HOOK_PORT: port, ANVIL_PUSH_TOKEN: token, GIT_QUARANTINE_PATH: quarantine },
      'a b refs/heads/ü\n',
    );
    expect(accepted).toEqual({ code: 0, stderr: '' });
    expect(received[0].token).toBe(token);
    // bash speaks HTTP/1.0 itself; curl speaks 1.1.
    expect(received[0].version).toBe(bash ? '1.0' : '1.1');
    expect(parseRefUpdates(parseHookBody(received[0].body)!.refLines)).toEqual([{ oldId: 'a', newId: 'b', ref: 'refs/heads/ü' }]);
    expect(parseHookBody(received[0].body)!.objects).toEqual({ GIT_QUARANTINE_PATH: quarantine });
    expect(await runHook({ ANVIL_HOOK_URL: url, ANVIL_HOOK_PORT: port, ANVIL_PUSH_TOKEN: token }, 'a b refs/heads/refused\n')).toEqual({
      code: 1,
      stderr: 'Anvil: branch refused\n',
    });
    expect(await runHook({}, '')).toEqual({ code: 1, stderr: 'Anvil: this hook runs only for pushes served by Anvil\n' });
  });

  it('sends a list of refs longer than one read whole', async () => {
    received.length = 0;
    const lines = Array.from({ length: 3000 }, (_, n) => `${'0'.repeat(40)} ${'a'.repeat(40)} refs/tags/v${n}\n`).join('');
    expect(await runHook({ ANVIL_HOOK_URL: url, ANVIL_HOOK_PORT: port, ANVIL_PUSH_TOKEN: token }, lines)).toEqual({ code: 0, stderr: '' });
    expect(parseRefUpdates(parseHookBody(received[0].body)!.refLines)).toHaveLength(3000);
  });

  it('says so when the server does not answer', async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = http.createServer().listen(0, '127.0.0.1', () => {
        const free = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(free));
      });
    });
    const env = { ANVIL_HOOK_URL: `http://127.0.0.1:${closed}/`, ANVIL_HOOK_PORT: String(closed), ANVIL_PUSH_TOKEN: token };
    expect(await runHook(env, 'a b refs/heads/main\n')).toEqual({ code: 1, stderr: 'Anvil: internal error: the server did not answer the hook\n' });
  });

  it('falls back to curl, then to the node program, when it cannot reach the server itself', async () => {
    received.length = 0;
    // Without ANVIL_HOOK_PORT bash takes the path of a bash built without network redirections.
    const env = { ANVIL_HOOK_URL: url, ANVIL_PUSH_TOKEN: token, GIT_OBJECT_DIRECTORY: '/q/objects' };
    expect(await runHook(env, 'a b refs/heads/main\n')).toEqual({ code: 0, stderr: '' });
    expect(await runHook({ ...env, PATH: path.join(dir, 'empty') }, 'a b refs/heads/refused\n')).toEqual({ code: 1, stderr: 'Anvil: branch refused\n' });
    expect(received.map((request) => request.version)).toEqual(['1.1', '1.1']);
    expect(received.map((request) => parseHookBody(request.body)!.objects)).toEqual([
      { GIT_OBJECT_DIRECTORY: '/q/objects' },
      { GIT_OBJECT_DIRECTORY: '/q/objects' },
    ]);
  });
});
