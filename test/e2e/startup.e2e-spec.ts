import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createConnection } from 'mysql2/promise';
import request from 'supertest';
import { loadConfig } from '../../src/config/config';
import { RunningServer, serve, StartupError } from '../../src/server/serve';
import { createMysqlDatabase, usesMysql } from '../support/test-app';

const ROOT = path.join(__dirname, '..', '..');
/**
 * A ceiling, not a measurement: transpiling and starting the whole server in a child process takes seconds on a
 * busy machine, and nothing here asserts how long.
 */
const PROCESS_TEST_CEILING_MS = 240_000;

/** A port that was free a moment ago: nothing listens there now. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A port something else holds until release(). */
async function takenPort(): Promise<{ port: number; release(): Promise<void> }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    release: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** `node src/main.ts` as `npm start` runs it (transpiled on the fly), with its output and exit. */
function startProcess(env: Record<string, string>) {
  const child = spawn(process.execPath, ['-r', 'ts-node/register', path.join(ROOT, 'src', 'main.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TS_NODE_TRANSPILE_ONLY: 'true', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const output = () => ({ stdout, stderr });
  const waitFor = async (pattern: RegExp): Promise<RegExpMatchArray> => {
    for (;;) {
      const match = pattern.exec(stdout);
      if (match) return match;
      const ended = await Promise.race([exited.then(() => true), new Promise<false>((resolve) => child.stdout.once('data', () => resolve(false)))]);
      if (ended) {
        const late = pattern.exec(stdout);
        if (late) return late;
        throw new Error(`the server ended before printing ${pattern}: ${stdout}${stderr}`);
      }
    }
  };
  return { child, exited, output, waitFor };
}

const messages = (stdout: string) =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => (JSON.parse(line) as { msg: string }).msg);

describe('start-up and shutdown', () => {
  let dataDir: string;
  let database: { url: string; drop(): Promise<void> } | undefined;
  const env = () => ({
    DATA_DIR: dataDir,
    ROOT_URL: 'http://anvil.test/',
    LOG_LEVEL: 'silent',
    PORT: '0',
    SSH_LISTEN_PORT: '0',
    SSH_LISTEN_HOST: '127.0.0.1',
    ...(database ? { DATABASE_URL: database.url } : {}),
  });

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-startup-'));
    database = usesMysql() ? await createMysqlDatabase() : undefined;
  });
  afterAll(async () => {
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('reports one line with the HTTP and SSH addresses and the data directory, and the start and end of shutdown', async () => {
    const lines: string[] = [];
    let swept: () => void = () => undefined;
    const sweepEnded = new Promise<void>((resolve) => (swept = resolve));
    const reporter = {
      info: (line: string) => {
        lines.push(line);
        if (line.startsWith('reconciliation sweep')) swept();
      },
    };
    const server: RunningServer = await serve(loadConfig(env()), reporter);
    try {
      const port = Number(/:(\d+)$/.exec(server.httpAddress)![1]);
      // The server listens before the repository sweep, which reports when it ends.
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^Anvil \\S+ listening: HTTP on \\S+:${port}, SSH on 127\\.0\\.0\\.1:\\d+; ROOT_URL http://anvil.test/; data directory ${dataDir}; database .*; reconciliation repaired 0$`,
        ),
      );
      await request(`http://127.0.0.1:${port}`).get('/api/healthz').expect(200);
      await sweepEnded;
    } finally {
      await server.stop('SIGTERM');
    }
    expect(lines.slice(1)).toEqual([
      'reconciliation sweep checked 0 repositories, repaired 0',
      'shutting down (SIGTERM): no new connections, finishing requests in flight',
      'shutdown complete',
    ]);
  });

  it('a port in use is one clear StartupError', async () => {
    const taken = await takenPort();
    try {
      await expect(serve(loadConfig({ ...env(), PORT: String(taken.port) }), { info: () => undefined })).rejects.toThrow(
        new StartupError(`port ${taken.port} is already in use: stop the other server or set PORT`),
      );
    } finally {
      await taken.release();
    }
  });

  it('an SSH port in use is one clear StartupError, and leaves no listener behind', async () => {
    const taken = await takenPort();
    // Every server the start-up tries to listen with on this thread (the push hooks' listener starts before the SSH
    // server, which listens on its transport's thread).
    const started: net.Server[] = [];
    const listen = net.Server.prototype.listen;
    const spy = jest.spyOn(net.Server.prototype, 'listen').mockImplementation(function (this: net.Server, ...args: unknown[]) {
      started.push(this);
      return (listen as (...args: unknown[]) => net.Server).apply(this, args);
    });
    try {
      const failure: unknown = await serve(loadConfig({ ...env(), SSH_LISTEN_PORT: String(taken.port), SSH_LISTEN_HOST: '0.0.0.0' }), {
        info: () => undefined,
      }).then(
        () => 'started',
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(StartupError);
      expect((failure as StartupError).message).toBe(
        `SSH port ${taken.port} is already in use: stop the other server, set SSH_LISTEN_PORT, or SSH_ENABLED=false`,
      );
      expect(started.length).toBeGreaterThanOrEqual(1);
      expect(started.filter((server) => server.listening).map((server) => server.address())).toEqual([]);
    } finally {
      spy.mockRestore();
      await taken.release();
    }
    // Nor did the transport's thread stay behind to take the port once it was free.
    const again = net.createServer();
    await new Promise<void>((resolve, reject) => again.once('error', reject).listen(taken.port, '0.0.0.0', resolve));
    await new Promise((resolve) => again.close(resolve));
  });

  it('an unwritable DATA_DIR is one clear StartupError', async () => {
    const file = path.join(dataDir, 'plain-file');
    fs.writeFileSync(file, '');
    await expect(serve(loadConfig({ ...env(), DATA_DIR: path.join(file, 'data') }), { info: () => undefined })).rejects.toThrow(
      /^DATA_DIR .*plain-file\/data is not a writable directory: ENOTDIR/,
    );
  });

  it('an unreachable database is one clear StartupError, without retrying', async () => {
    const port = await closedPort();
    const url = `mysql://root@127.0.0.1:${port}/anvil`;
    await expect(serve(loadConfig({ ...env(), DATABASE_URL: url }), { info: () => undefined })).rejects.toThrow(
      `cannot reach the database (MySQL 127.0.0.1:${port}/anvil): connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it('a database on a Unix socket (DATABASE_URL ?socket=): served through it, or one clear StartupError naming it', async () => {
    const missing = path.join(dataDir, 'no-such-mysqld.sock');
    await expect(serve(loadConfig({ ...env(), DATABASE_URL: `mysql://root@localhost/anvil?socket=${missing}` }), { info: () => undefined })).rejects.toThrow(
      `cannot reach the database (MySQL ${missing}/anvil): connect ENOENT ${missing}`,
    );
    if (!database) return;
    // The test database's own server, through the socket it listens on.
    const tcp = new URL(database.url);
    const connection = await createConnection(database.url);
    const [rows] = await connection.query('SELECT @@socket AS socket');
    await connection.end();
    const socket = (rows as { socket: string }[])[0].socket;
    const credentials = tcp.password ? `${tcp.username}:${tcp.password}` : tcp.username;
    const url = `mysql://${credentials}@localhost${tcp.pathname}?socket=${encodeURIComponent(socket)}`;
    const lines: string[] = [];
    const server = await serve(loadConfig({ ...env(), DATABASE_URL: url }), { info: (line) => lines.push(line) });
    try {
      expect(lines[0]).toContain(`database MySQL ${socket}${tcp.pathname}`);
      const port = Number(/:(\d+)$/.exec(server.httpAddress)![1]);
      await request(`http://127.0.0.1:${port}`).get('/api/healthz').expect(200);
    } finally {
      await server.stop('SIGTERM');
    }
  });

  it(
    'the real process: a port in use prints one line on stderr, no stack, and exits 1',
    async () => {
      const taken = await takenPort();
      try {
        const run = startProcess({ ...env(), PORT: String(taken.port) });
        expect(await run.exited).toBe(1);
        expect(run.output().stderr).toBe(`anvil: port ${taken.port} is already in use: stop the other server or set PORT\n`);
      } finally {
        await taken.release();
      }
    },
    PROCESS_TEST_CEILING_MS,
  );

  it(
    'the real process: logs where it listens, Nest route mapping only at debug, and shutdown on SIGTERM',
    async () => {
      const run = startProcess({ ...env(), LOG_LEVEL: 'info' });
      const [, port] = await run.waitFor(/listening: HTTP on \S+:(\d+), SSH on \S+;/);
      await request(`http://127.0.0.1:${port}`).get('/api/v1/version').expect(200);
      // The repository sweep runs after the server listens and logs when it ends.
      await run.waitFor(/reconciliation sweep checked \d+ repositories, repaired \d+/);
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
      const logged = messages(run.output().stdout);
      expect(logged.filter((message) => /Mapped|dependencies initialized/.test(message))).toEqual([]);
      expect(logged.filter((message) => message.startsWith('Anvil '))).toHaveLength(1);
      expect(logged.slice(-2)).toEqual(['shutting down (SIGTERM): no new connections, finishing requests in flight', 'shutdown complete']);
      expect(run.output().stderr).toBe('');
    },
    PROCESS_TEST_CEILING_MS,
  );
});
