import { ChildProcess, execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { createConnection } from 'mysql2/promise';

const run = promisify(execFile);

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A MariaDB server of the test's own (its data directory, port and socket), which the test may pause
 * (SIGSTOP), kill and start again: the shared server other suites use is never touched.
 */
export class PrivateMariaDb {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  private constructor(
    readonly directory: string,
    readonly port: number,
  ) {}

  static async create(): Promise<PrivateMariaDb> {
    for (const tool of ['mariadb-install-db', 'mariadbd']) {
      await run('bash', ['-c', `command -v ${tool}`]).catch(() => {
        throw new Error(`${tool} is not installed: the fault suite needs the MariaDB server package (apt-get install mariadb-server)`);
      });
    }
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-fault-mariadb-'));
    await run('mariadb-install-db', [
      '--no-defaults',
      `--datadir=${path.join(directory, 'data')}`,
      '--user=root',
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
    ]);
    const server = new PrivateMariaDb(directory, await freePort());
    await server.start();
    return server;
  }

  /** mysql://root@127.0.0.1:<port>/<database> */
  url(database: string): string {
    return `mysql://root@127.0.0.1:${this.port}/${database}`;
  }

  /** Starts mariadbd on its data directory and waits until it answers. */
  async start(): Promise<void> {
    const binary = (await run('bash', ['-c', 'command -v mariadbd || echo /usr/sbin/mariadbd'])).stdout.trim();
    const child = spawn(
      binary,
      [
        '--no-defaults',
        `--datadir=${path.join(this.directory, 'data')}`,
        `--port=${this.port}`,
        '--bind-address=127.0.0.1',
        `--socket=${path.join(this.directory, 'mariadb.sock')}`,
        `--pid-file=${path.join(this.directory, 'mariadb.pid')}`,
        `--log-error=${path.join(this.directory, 'error.log')}`,
        '--user=root',
        '--innodb-buffer-pool-size=16M',
        '--skip-log-bin',
      ],
      { stdio: 'ignore' },
    );
    this.child = child;
    this.exited = new Promise((resolve) => child.on('exit', () => resolve()));
    for (let attempt = 0; attempt < 120; attempt++) {
      if (await this.answers()) return;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    throw new Error(`the private mariadbd did not start: ${fs.readFileSync(path.join(this.directory, 'error.log'), 'utf8').slice(-2000)}`);
  }

  async answers(): Promise<boolean> {
    try {
      const connection = await createConnection({ host: '127.0.0.1', port: this.port, user: 'root', connectTimeout: 2000 });
      await connection.end();
      return true;
    } catch {
      return false;
    }
  }

  async createDatabase(name: string): Promise<void> {
    const connection = await createConnection({ host: '127.0.0.1', port: this.port, user: 'root' });
    await connection.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    await connection.end();
  }

  /** Hangs it: connections stay open, nothing is answered. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** Stops it dead (SIGKILL): connections are refused until `start`. */
  async kill(): Promise<void> {
    this.child?.kill('SIGCONT');
    this.child?.kill('SIGKILL');
    await this.exited;
    this.child = undefined;
  }

  async destroy(): Promise<void> {
    await this.kill();
    fs.rmSync(this.directory, { recursive: true, force: true });
  }
}
