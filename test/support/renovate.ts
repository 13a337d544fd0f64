import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The real Renovate, installed from the npm registry into a cache outside the project's dependencies
 * (`npm install renovate@39 --omit=optional`, about a minute), and run as a child process against a started
 * Anvil. ANVIL_RENOVATE_DIR overrides the cache directory.
 */
export const RENOVATE_MAJOR = '39';

export function renovateDir(): string {
  return process.env.ANVIL_RENOVATE_DIR ?? path.join(os.homedir(), '.cache', `anvil-renovate-${RENOVATE_MAJOR}`);
}

function renovateBin(dir: string): string {
  return path.join(dir, 'node_modules', 'renovate', 'dist', 'renovate.js');
}

/** PATH, and how this machine reaches the npm registry (a proxy, its certificate authorities). */
function passedThrough(): NodeJS.ProcessEnv {
  const names = [
    'PATH',
    'NODE_EXTRA_CA_CERTS',
    'SSL_CERT_FILE',
    'SSL_CERT_DIR',
    'GIT_SSL_CAINFO',
    'HTTP_PROXY',
    'HTTPS_PROXY',
    'NO_PROXY',
    'http_proxy',
    'https_proxy',
    'no_proxy',
  ];
  return Object.fromEntries(names.filter((name) => process.env[name] !== undefined).map((name) => [name, process.env[name]]));
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], options: { cwd?: string; env: NodeJS.ProcessEnv }): Promise<Run> {
  return new Promise((resolve, reject) => {
    // Asynchronous: the application under test answers from this same process.
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Installs Renovate into the cache when it is not there yet: into a directory of its own first, renamed into place
 * when complete, so that a cut install or two runs at once never leave a half-installed cache behind.
 */
export async function ensureRenovate(): Promise<string> {
  const dir = renovateDir();
  if (fs.existsSync(renovateBin(dir))) return dir;
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const staging = fs.mkdtempSync(`${dir}.installing-`);
  try {
    fs.writeFileSync(path.join(staging, 'package.json'), JSON.stringify({ name: 'anvil-renovate-cache', private: true }));
    // --prefix: inside `npm run test:e2e`, npm's own variables name the project as the place to install into.
    const npm = await run('npm', ['install', '--prefix', staging, `renovate@${RENOVATE_MAJOR}`, '--omit=optional', '--no-audit', '--no-fund', '--no-save'], {
      cwd: staging,
      env: process.env,
    });
    if (npm.code !== 0) throw new Error(`npm install renovate@${RENOVATE_MAJOR} failed (${npm.code}):\n${npm.stderr.slice(-4000)}`);
    // A directory left without Renovate in it (an install cut short by hand) would refuse the rename for ever.
    if (!fs.existsSync(renovateBin(dir))) fs.rmSync(dir, { recursive: true, force: true });
    try {
      fs.renameSync(staging, dir);
    } catch (error) {
      // Another run finished first: use its install.
      if (!fs.existsSync(renovateBin(dir))) throw error;
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return dir;
}

export interface RenovateRun extends Run {
  /** Renovate's log (LOG_LEVEL=debug, JSON lines). */
  log: string;
  /** Log lines at warn (40) or above, as `msg` texts (with the error's message). */
  warnings: string[];
}

/**
 * One Renovate run with the Gitea platform against `endpoint` (…/api/v1) for one repository, in a HOME, base and
 * cache directory of its own under `workDir`; `env` adds or overrides RENOVATE_* settings.
 */
export async function runRenovate(options: {
  dir: string;
  workDir: string;
  endpoint: string;
  token: string;
  repository: string;
  env?: Record<string, string>;
}): Promise<RenovateRun> {
  const home = path.join(options.workDir, 'home');
  fs.mkdirSync(home, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...passedThrough(),
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    LOG_LEVEL: 'debug',
    LOG_FORMAT: 'json',
    RENOVATE_PLATFORM: 'gitea',
    RENOVATE_ENDPOINT: options.endpoint,
    RENOVATE_TOKEN: options.token,
    RENOVATE_REPOSITORIES: JSON.stringify([options.repository]),
    RENOVATE_GIT_AUTHOR: 'Renovate Bot <renovate@example.com>',
    RENOVATE_BASE_DIR: path.join(options.workDir, 'base'),
    RENOVATE_CACHE_DIR: path.join(options.workDir, 'cache'),
    RENOVATE_ONBOARDING: 'false',
    RENOVATE_REQUIRE_CONFIG: 'optional',
    // Clone from the endpoint's host (the server's ROOT_URL names a host only the test knows).
    RENOVATE_GIT_URL: 'endpoint',
    ...options.env,
  };
  const result = await run(process.execPath, [renovateBin(options.dir)], { env });
  // The debug log, kept beside the run's directories for reading after a failure.
  const log = result.stdout;
  fs.writeFileSync(path.join(options.workDir, `renovate-${fs.readdirSync(options.workDir).length}.log`), log);
  const warnings: string[] = [];
  for (const line of log.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { level: number; msg: string; err?: { message?: string } };
      if (entry.level >= 40) warnings.push(entry.err?.message ? `${entry.msg}: ${entry.err.message}` : entry.msg);
    } catch {
      // Not a log entry.
    }
  }
  return { ...result, log, warnings };
}
