/**
 * The built server and CLI (`node dist/...`, built once per file when a source changed, as `npm start` does) for
 * the fault tests that start and kill many servers: a start takes a second instead of a transpilation.
 */
import { ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';

export const ROOT = path.join(__dirname, '..', '..', '..');
const run = promisify(execFile);

/** Builds dist/ when a source changed since the last build (as `npm start` does), once per test file. */
export function buildOnce(): void {
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build-if-changed.js')], { cwd: ROOT, stdio: 'ignore' });
}

/** A real server process (`node dist/src/main.js`), its output, and how it ended. */
export interface ServerProcess {
  child: ChildProcess;
  /** `http://127.0.0.1:<port>` once it listens. */
  url: string;
  /** The start-up line (with the reconciliation's count). */
  startupLine: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  /** The line the repository sweep prints when it ends, after the server listens (its count of repairs). */
  sweepLine(): Promise<string>;
  /** SIGTERM and wait for the end. */
  stop(): Promise<void>;
}

export function baseEnv(dataDir: string, databaseUrl: string | undefined): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    DATA_DIR: dataDir,
    ROOT_URL: 'http://anvil.test/',
    PORT: '0',
    SSH_LISTEN_PORT: '0',
    SSH_LISTEN_HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    // One test drives everything from one address.
    RATE_LIMIT_TOKEN_CREATION: '1000000',
    // Webhook deliveries at the server's priority: on a busy CI machine a delivery process at nice 19 (the
    // default) gets almost no CPU while a test waits for its deliveries. The low priority has its test here,
    // which asks for it (cpu-saturation.fault-spec.ts).
    WEBHOOK_SENDER_NICE: '0',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
}

/**
 * Starts the built server and waits for its start-up line (or its early end, which fails). `otherMachine`: in a
 * PID namespace of its own (root), so that no other process here can tell from its pid whether it runs, as for
 * an instance on another machine sharing DATA_DIR and the database; a shell is the namespace's first process, so
 * the server can still kill itself at a fault point.
 */
export async function startServer(env: Record<string, string>, options: { otherMachine?: boolean } = {}): Promise<ServerProcess> {
  const main = path.join(ROOT, 'dist', 'src', 'main.js');
  const child = options.otherMachine
    ? spawn(
        'unshare',
        ['--pid', '--fork', '--kill-child', '--mount-proc', 'sh', '-c', `${JSON.stringify(process.execPath)} ${JSON.stringify(main)}; exit $?`],
        { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
      )
    : spawn(process.execPath, [main], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const pattern = /(Anvil \S+ listening: HTTP on \S*?:(\d+)[,;][^"]*)/;
  for (;;) {
    const match = pattern.exec(output);
    if (match) {
      return {
        child,
        url: `http://127.0.0.1:${match[2]}`,
        startupLine: match[1],
        exited,
        output: () => output,
        sweepLine: async () => {
          const swept = /reconciliation sweep checked \d+ repositories, repaired \d+/;
          for (;;) {
            const match = swept.exec(output);
            if (match) return match[0];
            const ended = await Promise.race([exited.then(() => true), new Promise<false>((resolve) => child.stdout!.once('data', () => resolve(false)))]);
            if (ended && !swept.test(output)) throw new Error(`the server ended before its sweep did:\n${output}`);
          }
        },
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      };
    }
    const ended = await Promise.race([exited.then(() => true), new Promise<false>((resolve) => child.stdout!.once('data', () => resolve(false)))]);
    if (ended && !pattern.test(output)) throw new Error(`the server ended before listening:\n${output}`);
  }
}

/** `node dist/src/cli/main.js <args>`: its output and exit status. */
export async function cli(env: Record<string, string>, args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  try {
    // Warnings and errors only: the CLI's information lines (its audit events) would go to standard error too.
    const { stdout, stderr } = await run(process.execPath, [path.join(ROOT, 'dist', 'src', 'cli', 'main.js'), ...args], {
      cwd: ROOT,
      env: { ...env, LOG_LEVEL: 'warn' },
      maxBuffer: 64 * 1024 * 1024,
    });
    return { status: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { status: typeof failed.code === 'number' ? failed.code : 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** A site admin and a token for it, made with the CLI. */
export async function adminToken(env: Record<string, string>, username = 'faults-admin'): Promise<string> {
  const made = await cli(env, [
    'admin',
    'user',
    'create',
    '--username',
    username,
    '--password',
    'faults-password',
    '--email',
    `${username}@example.com`,
    '--admin',
    '--access-token',
  ]);
  if (made.status !== 0) throw new Error(`admin user create failed: ${made.stderr}${made.stdout}`);
  return tokenLine(made.stdout);
}

/**
 * The token `--access-token` prints: its own line of 40 hex digits. At LOG_LEVEL=info the CLI's audit log lines
 * share stdout and may be flushed after it, so the last line is not always the token.
 */
export function tokenLine(stdout: string): string {
  const token = stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^[0-9a-f]{40}$/.test(line))
    .pop();
  if (!token) throw new Error(`no token in the CLI's output: ${stdout}`);
  return token;
}

/** `git <args>`, failing with git's message. */
export async function git(args: string[], cwd?: string): Promise<string> {
  const { stdout } = await run('git', args, {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'T',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 'T',
      GIT_COMMITTER_EMAIL: 't@example.com',
    },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** The pid of the server's webhook delivery process (its child, by its command line), or 0. */
export function deliveryChild(serverPid: number): number {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = fs.readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ');
      if (Number(fields[1]) === serverPid && fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('webhook-delivery.process')) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return 0;
}
