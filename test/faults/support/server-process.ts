import { ChildProcess, execFile, spawn } from 'node:child_process';
import * as http from 'node:http';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { tokenLine } from './built-server';

export const ROOT = path.join(__dirname, '..', '..', '..');
const run = promisify(execFile);

/** The environment every server and CLI of the fault suite runs with, on top of the caller's. */
function environment(env: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    TS_NODE_TRANSPILE_ONLY: 'true',
    ROOT_URL: 'http://anvil.test/',
    LOG_LEVEL: 'info',
    PORT: '0',
    SSH_LISTEN_PORT: '0',
    SSH_LISTEN_HOST: '127.0.0.1',
    RATE_LIMIT_SIGN_IN_PER_IP: '1000000',
    RATE_LIMIT_SIGN_IN_PER_ACCOUNT: '1000000',
    RATE_LIMIT_TOKEN_CREATION: '1000000',
    // Off unless a test sets it: the small disks of the fault tests are below the default reserve.
    STORAGE_RESERVE: '0',
    ...env,
  };
}

/** The built server, as `npm start` runs it (jest.faults.config.js builds it first); with `openFiles`, under `ulimit -n`. */
export interface ServerProcess {
  child: ChildProcess;
  /** http://127.0.0.1:<port> */
  url: string;
  /** Everything it printed (the log is JSON lines on stdout). */
  output(): string;
  /** Resolves with the exit code or signal once it has ended; `exitedEarly` says whether it has. */
  exited: Promise<number | string | null>;
  hasExited(): boolean;
  stop(): Promise<void>;
}

export async function startServer(env: Record<string, string>, options: { openFiles?: number } = {}): Promise<ServerProcess> {
  const main = `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(ROOT, 'dist', 'src', 'main.js'))}`;
  const script = options.openFiles ? `ulimit -n ${options.openFiles} && ${main}` : main;
  const child = spawn('bash', ['-c', script], { cwd: ROOT, env: environment(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let ended = false;
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string | null>((resolve) =>
    child.on('exit', (code, signal) => {
      ended = true;
      resolve(code ?? signal);
    }),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const check = () => {
      const match = /listening: HTTP on \S+:(\d+)/.exec(output);
      if (match) {
        child.stdout!.off('data', check);
        resolve(Number(match[1]));
      }
    };
    child.stdout!.on('data', check);
    void exited.then(() => reject(new Error(`the server ended before it listened:\n${output}`)));
  });
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    exited,
    hasExited: () => ended,
    stop: async () => {
      if (!ended) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Runs the admin CLI (`npm run cli`) on the same settings; answers its standard output. */
export async function cli(env: Record<string, string>, args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [path.join(ROOT, 'dist', 'src', 'cli', 'main.js'), ...args], {
    cwd: ROOT,
    env: environment({ ...env, LOG_LEVEL: 'warn' }),
  });
  return stdout;
}

/** A site administrator and their token, made with the CLI before the server starts. */
export async function makeAdmin(env: Record<string, string>, name = 'fault-admin'): Promise<{ name: string; token: string }> {
  const out = await cli(env, [
    'admin',
    'user',
    'create',
    '--username',
    name,
    '--password',
    'fault-admin-password',
    '--email',
    `${name}@example.com`,
    '--admin',
    '--access-token',
  ]);
  const token = tokenLine(out);
  return { name, token };
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  json<T = Record<string, unknown>>(): T;
}

/**
 * One HTTP exchange on a connection of its own. Rejects when no answer came: a reset, a connection closed without
 * an answer, or nothing within `timeoutMs` (the bound the fault tests assert).
 */
export function call(
  base: string,
  method: string,
  pathAndQuery: string,
  options: { token?: string; body?: unknown; raw?: Buffer; contentType?: string; timeoutMs?: number } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = options.raw ?? (options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body)));
    const headers: http.OutgoingHttpHeaders = { Connection: 'close' };
    if (options.token) headers.Authorization = `token ${options.token}`;
    if (payload) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
      headers['Content-Length'] = payload.length;
    }
    const request = http.request(`${base}${pathAndQuery}`, { method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        clearTimeout(timer);
        const body = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode!, headers: response.headers, body, json: <T>() => JSON.parse(body) as T });
      });
    });
    const timer = setTimeout(() => {
      request.destroy(new Error(`no answer to ${method} ${pathAndQuery} within ${options.timeoutMs ?? 30_000} ms`));
    }, options.timeoutMs ?? 30_000);
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.end(payload);
  });
}

/** Calls until `accept` holds for an answer (recovery after a fault), at most `attempts` times, a second apart. */
export async function eventually(attempt: () => Promise<Answer>, accept: (answer: Answer) => boolean, attempts = 60): Promise<Answer> {
  let last: unknown;
  for (let index = 0; index < attempts; index++) {
    try {
      const answer = await attempt();
      if (accept(answer)) return answer;
      last = `${answer.status} ${answer.body}`;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new Error(`never recovered; last: ${String(last)}`);
}
