import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { waitFor } from './ports';

export const ROOT = path.join(__dirname, '..', '..', '..');

/** One Anvil server process (the built `dist/src/main.js`, as `npm start` runs it) on a fixed loopback port. */
export class AnvilInstance {
  private child?: ChildProcess;
  private output = '';
  private exited?: Promise<void>;

  constructor(
    readonly name: string,
    readonly port: number,
    private readonly env: Record<string, string>,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts the process; `ready` waits until /api/healthz/ready answers 200. */
  start(): void {
    this.output = '';
    const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'src', 'main.js')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', PORT: String(this.port), ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => (this.output = (this.output + chunk.toString()).slice(-20_000)));
    child.stderr!.on('data', (chunk: Buffer) => (this.output = (this.output + chunk.toString()).slice(-20_000)));
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    this.child = child;
  }

  async ready(): Promise<void> {
    // An exit ends the wait at once (waitFor takes a failing check for "not yet").
    const exited = () => this.child?.exitCode !== null || this.child?.signalCode !== null;
    await waitFor(`${this.name} ready`, 240_000, async () => {
      if (exited()) return true;
      const response = await fetch(`${this.url}/api/healthz/ready`);
      return response.status === 200;
    }).catch((error: Error) => {
      throw new Error(`${error.message}\n${this.output}`);
    });
    if (exited()) throw new Error(`${this.name} exited:\n${this.output}`);
  }

  /** SIGTERM, and wait for the process to end. */
  async stop(): Promise<void> {
    if (!this.child || this.child.exitCode !== null) return;
    this.child.kill('SIGTERM');
    await this.exited;
  }

  /** kill -9. */
  async kill(): Promise<void> {
    if (!this.child || this.child.exitCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  log(): string {
    return this.output;
  }
}
