import * as os from 'node:os';
import * as path from 'node:path';
import { parseCidr } from './net-address';
import type {
  AuditConfig,
  DatabaseConfig,
  DatabaseTimeouts,
  GitConfig,
  HttpConfig,
  MarkdownConfig,
  MirrorConfig,
  PagingConfig,
  QuotaConfig,
  RateLimitConfig,
  ReverseProxyConfig,
  SshConfig,
  UploadConfig,
  WebhookConfig,
  LfsConfig,
} from './slices';

// One cohesive thing, kept whole though long: every setting, parsed and validated in one place.

/**
 * The one typed, validated configuration object. Nothing else in the code base reads process.env:
 * every setting is parsed here once, at start, and a bad value stops the process with a message
 * naming the variable. Its groups are the slices of slices.ts, which ConfigModule provides one by one;
 * only start-up, the CLI and ConfigModule itself hold the whole.
 */
export interface AppConfig {
  port: number;
  dataDir: string;
  database: DatabaseConfig;
  /** How long the server waits on its database before it answers 503 (data-source.ts, database-timeouts.ts). */
  databaseTimeouts: DatabaseTimeouts;
  /** Public base URL, always ending with '/'. */
  rootUrl: string;
  /** Host name of ROOT_URL: the no-reply e-mail domain and the SSH host. */
  rootHost: string;
  quota: QuotaConfig;
  allowLocalNetworks: boolean;
  paging: PagingConfig;
  markdown: MarkdownConfig;
  /** Largest request body read into memory, in bytes, unless a route declares its own limit. */
  maxBodyBytes: number;
  http: HttpConfig;
  rateLimits: RateLimitConfig;
  uploads: UploadConfig;
  /** Files above this size are not inlined (base64) by GET /repos/{o}/{r}/contents (MAX_DISPLAY_FILE_SIZE). */
  maxDisplayFileBytes: number;
  /** ISSUE_MAX_PINNED: issues (and as many pull requests) a repository may pin. */
  maxPinnedIssues: number;
  /** ISSUE_LIST_CACHE_MS: lifetime of a page of issues or pull requests read once (0: none). */
  listCacheMs: number;
  logLevel: string;
  /** LOG_FILE: where the log goes instead of standard output. */
  logFile?: string;
  /** Without LOG_FILE, the log's stream: standard output for the server, standard error for the CLI. */
  logStream?: 'stdout' | 'stderr';
  /** Origins allowed to call the API from a browser (`*` for any); empty: no cross-origin access. */
  corsAllowedOrigins: string[];
  /** GET /metrics in Prometheus format; with a token, only `Authorization: Bearer <token>` may read it. */
  metrics: { enabled: boolean; token: string | undefined };
  ssh: SshConfig;
  git: GitConfig;
  /** SECRET_KEY: encrypts stored secrets (mirror credentials); null = generated into DATA_DIR/secret_key. */
  secretKey: string | null;
  storageReserveBytes: number;
  mirrors: MirrorConfig;
  /**
   * HEAP_GROWTH_PERCENT: how far V8 lets the old generation grow past what survived its last full collection
   * before it collects again; 0 leaves V8's own heuristics (see server/heap-growth.ts).
   */
  heapGrowthPercent: number;
  /** RECONCILE_STALE_AFTER, RECONCILE_START_BUDGET, RECONCILE_PROCESS_LEASE: see IntegrityConfig. */
  reconcileStaleAfterMs: number;
  reconcileStartBudget: number;
  processLeaseMs: number;
  /**
   * ANVIL_FAULT_KILL_AT: names of fault points (src/common/fault-points.ts) at which the server kills itself
   * with SIGKILL, for the crash tests; `point:N` at the point's N-th pass. Unset in production.
   */
  faultKillAt: string[];
  webhooks: WebhookConfig;
  reverseProxy: ReverseProxyConfig;
  audit: AuditConfig;
  lfs: LfsConfig;
}

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`invalid configuration: ${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

export const APP_CONFIG = Symbol('APP_CONFIG');

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): AppConfig {
  const port = integer(env, 'PORT', 3000, { min: 0, max: 65535 });
  const dataDir = path.resolve(nonEmpty(env, 'DATA_DIR') ?? './data');
  const rootUrl = parseRootUrl(nonEmpty(env, 'ROOT_URL') ?? `http://localhost:${port}/`);
  const defaultLimit = integer(env, 'DEFAULT_PAGING_NUM', 30, { min: 1 });
  const maxLimit = integer(env, 'MAX_RESPONSE_ITEMS', 50, { min: 1 });
  if (defaultLimit > maxLimit) {
    throw new ConfigError('DEFAULT_PAGING_NUM', `must not exceed MAX_RESPONSE_ITEMS (${maxLimit})`);
  }
  return {
    port,
    dataDir,
    database: parseDatabaseUrl(nonEmpty(env, 'DATABASE_URL'), dataDir),
    databaseTimeouts: {
      connectMs: integer(env, 'DATABASE_CONNECT_TIMEOUT', 5, { min: 1 }) * 1000,
      acquireMs: integer(env, 'DATABASE_ACQUIRE_TIMEOUT', 10, { min: 1 }) * 1000,
      queryMs: integer(env, 'DATABASE_QUERY_TIMEOUT', 30, { min: 1 }) * 1000,
    },
    rootUrl: rootUrl.href,
    rootHost: rootUrl.hostname,
    quota: {
      enabled: boolean(env, 'QUOTA_ENABLED', true),
      defaultGroups: (env.QUOTA_DEFAULT_GROUPS ?? '')
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name !== ''),
      defaultTotal: byteSize(env, 'QUOTA_DEFAULT_TOTAL', -1),
    },
    allowLocalNetworks: boolean(env, 'ALLOW_LOCAL_NETWORKS', false),
    paging: { defaultLimit, maxLimit },
    // remark's parser is superlinear on large documents (long lists above all): 512 KiB of prose renders in
    // about three seconds on one core, and the render time budget stops pathological documents.
    markdown: {
      maxBytes: byteSize(env, 'MARKDOWN_MAX_SIZE', 512 * 1024),
      renderBudgetMs: integer(env, 'MARKDOWN_RENDER_BUDGET_MS', 5_000, { min: 100 }),
      maxOutputBytes: byteSize(env, 'MARKDOWN_MAX_OUTPUT_SIZE', 4 * 1024 * 1024),
      rendersPerUser: integer(env, 'MARKDOWN_RENDERS_PER_USER', 1, { min: 1 }),
    },
    maxBodyBytes: byteSize(env, 'MAX_BODY_SIZE', 1024 * 1024),
    http: parseHttpServer(env),
    rateLimits: {
      store: oneOf(env, 'RATE_LIMIT_STORE', ['memory', 'database'], 'memory'),
      windowMs: integer(env, 'RATE_LIMIT_WINDOW_MS', 60_000, { min: 1 }),
      signInPerIp: integer(env, 'RATE_LIMIT_SIGN_IN_PER_IP', 30, { min: 0 }),
      signInPerAccount: integer(env, 'RATE_LIMIT_SIGN_IN_PER_ACCOUNT', 10, { min: 0 }),
      markdown: integer(env, 'RATE_LIMIT_MARKDOWN', 120, { min: 0 }),
      tokenCreation: integer(env, 'RATE_LIMIT_TOKEN_CREATION', 20, { min: 0 }),
      keyUpload: integer(env, 'RATE_LIMIT_KEY_UPLOAD', 20, { min: 0 }),
      changePassword: integer(env, 'RATE_LIMIT_CHANGE_PASSWORD', 10, { min: 0 }),
      oauth2: integer(env, 'RATE_LIMIT_OAUTH2', 60, { min: 0 }),
      oauth2Requests: integer(env, 'RATE_LIMIT_OAUTH2_REQUESTS', 600, { min: 0 }),
    },
    logFile: nonEmpty(env, 'LOG_FILE'),
    uploads: {
      attachmentMaxBytes: byteSize(env, 'ATTACHMENT_MAX_SIZE', 2 * 1024 ** 3),
      packageMaxBytes: byteSize(env, 'PACKAGE_MAX_SIZE', 2 * 1024 ** 3),
    },
    maxDisplayFileBytes: byteSize(env, 'MAX_DISPLAY_FILE_SIZE', 8 * 1024 * 1024),
    maxPinnedIssues: integer(env, 'ISSUE_MAX_PINNED', 3, { min: 0, max: 1000 }),
    listCacheMs: integer(env, 'ISSUE_LIST_CACHE_MS', 1000, { min: 0, max: 60000 }),
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
    corsAllowedOrigins: origins(env, 'CORS_ALLOWED_ORIGINS'),
    metrics: { enabled: boolean(env, 'METRICS_ENABLED', false), token: nonEmpty(env, 'METRICS_TOKEN') },
    ssh: {
      enabled: boolean(env, 'SSH_ENABLED', true),
      listenHost: nonEmpty(env, 'SSH_LISTEN_HOST') ?? '0.0.0.0',
      listenPort: integer(env, 'SSH_LISTEN_PORT', 2222, { min: 0, max: 65535 }),
      advertisedPort: nonEmpty(env, 'SSH_PORT') === undefined ? null : integer(env, 'SSH_PORT', 22, { min: 1, max: 65535 }),
      user: nonEmpty(env, 'SSH_USER') ?? 'git',
      hostKeyFile: path.resolve(nonEmpty(env, 'SSH_HOST_KEY') ?? path.join(dataDir, 'ssh', 'ssh_host_ed25519_key')),
      loginGraceMs: 1000 * integer(env, 'SSH_LOGIN_GRACE_TIME', 60, { min: 1 }),
      maxConnections: integer(env, 'SSH_MAX_CONNECTIONS', 512, { min: 1 }),
      maxUnauthenticated: integer(env, 'SSH_MAX_UNAUTHENTICATED', 64, { min: 1 }),
      maxUnauthenticatedPerAddress: integer(env, 'SSH_MAX_UNAUTHENTICATED_PER_ADDRESS', 8, { min: 1 }),
      maxAuthTries: integer(env, 'SSH_MAX_AUTH_TRIES', 6, { min: 1 }),
    },
    git: gitServingConfig(env),
    secretKey: nonEmpty(env, 'SECRET_KEY') ?? null,
    storageReserveBytes: byteSize(env, 'STORAGE_RESERVE', 64 * 1024 ** 2),
    mirrors: {
      maxConcurrency: integer(env, 'MIRROR_MAX_CONCURRENCY', 4, { min: 1 }),
      syncMaxPerOwner: integer(env, 'MIRROR_SYNC_MAX_PER_USER', 2, { min: 1 }),
      maxPerOwner: integer(env, 'MIRROR_MAX_PER_USER', 20, { min: -1 }),
      migrationMaxConcurrency: integer(env, 'MIGRATION_MAX_CONCURRENCY', 4, { min: 1 }),
      migrationMaxPerUser: integer(env, 'MIGRATION_MAX_PER_USER', 2, { min: 1 }),
      migrationQueueTimeoutMs: 1000 * integer(env, 'MIGRATION_QUEUE_TIMEOUT', 60, { min: 0 }),
      lfsMaxObjects: integer(env, 'MIRROR_LFS_MAX_OBJECTS', 1000, { min: 1 }),
      lfsMaxBytes: byteSize(env, 'MIRROR_LFS_MAX_SIZE', 4 * 1024 ** 3),
      lfsTimeoutMs: 1000 * integer(env, 'MIRROR_LFS_TIMEOUT', 600, { min: 1 }),
      cloneTimeoutMs: 600_000,
      fetchTimeoutMs: 300_000,
      tickMs: 60_000,
    },
    heapGrowthPercent: integer(env, 'HEAP_GROWTH_PERCENT', 30, { min: 0, max: 1000 }),
    reconcileStaleAfterMs: 1000 * integer(env, 'RECONCILE_STALE_AFTER', 3600, { min: 0 }),
    reconcileStartBudget: integer(env, 'RECONCILE_START_BUDGET', 500, { min: 0 }),
    processLeaseMs: 1000 * integer(env, 'RECONCILE_PROCESS_LEASE', 15, { min: 1, max: 3600 }),
    faultKillAt: (env.ANVIL_FAULT_KILL_AT ?? '')
      .split(',')
      .map((point) => point.trim())
      .filter((point) => point !== ''),
    webhooks: {
      allowedHosts: nonEmpty(env, 'WEBHOOK_ALLOWED_HOSTS') ?? 'external',
      maxAttempts: integer(env, 'WEBHOOK_MAX_ATTEMPTS', 8, { min: 1, max: 100 }),
      workers: integer(env, 'WEBHOOK_DELIVERY_WORKERS', 16, { min: 1, max: 1024 }),
      timeoutMs: 1000 * integer(env, 'WEBHOOK_TIMEOUT', 10, { min: 1, max: 600 }),
      connectTimeoutMs: 1000 * integer(env, 'WEBHOOK_CONNECT_TIMEOUT', 5, { min: 1, max: 600 }),
      firstByteTimeoutMs: 1000 * integer(env, 'WEBHOOK_FIRST_BYTE_TIMEOUT', 10, { min: 1, max: 600 }),
      senderNice: integer(env, 'WEBHOOK_SENDER_NICE', 19, { min: 0, max: 19 }),
      historyDays: integer(env, 'WEBHOOK_HISTORY_DAYS', 30, { min: 1 }),
      payloadCommitLimit: integer(env, 'WEBHOOK_PAYLOAD_COMMIT_LIMIT', 15, { min: 1, max: 1000 }),
      pollMs: 1000,
      retryBaseMs: 1000,
      leaseRenewMs: 2000,
      retryMaxMs: 3_600_000,
    },
    reverseProxy: {
      authEnabled: boolean(env, 'REVERSE_PROXY_AUTH_ENABLED', false),
      userHeader: headerName(env, 'REVERSE_PROXY_AUTH_USER', 'X-WEBAUTH-USER'),
      emailHeader: headerName(env, 'REVERSE_PROXY_AUTH_EMAIL', 'X-WEBAUTH-EMAIL'),
      fullNameHeader: headerName(env, 'REVERSE_PROXY_AUTH_FULL_NAME', 'X-WEBAUTH-FULLNAME'),
      autoRegistration: boolean(env, 'REVERSE_PROXY_AUTO_REGISTRATION', false),
      trustedProxies: cidrs(env, 'REVERSE_PROXY_TRUSTED_PROXIES', ['127.0.0.0/8', '::1/128']),
      forwardingHeader: headerName(env, 'REVERSE_PROXY_FORWARDING_HEADER', 'X-Forwarded-For'),
    },
    audit: { retentionDays: integer(env, 'AUDIT_RETENTION_DAYS', 365, { min: 1 }) },
    lfs: {
      startServer: boolean(env, 'LFS_START_SERVER', true),
      maxFileBytes: byteSize(env, 'LFS_MAX_FILE_SIZE', 0),
      maxBatchSize: integer(env, 'LFS_MAX_BATCH_SIZE', 1000, { min: 1, max: 100_000 }),
      locksPagingNum: integer(env, 'LFS_LOCKS_PAGING_NUM', 50, { min: 1, max: 1000 }),
      httpAuthExpirySeconds: durationSeconds(env, 'LFS_HTTP_AUTH_EXPIRY', 20 * 60),
      jwtSecret: nonEmpty(env, 'LFS_JWT_SECRET') ?? null,
    },
  };
}

/** A duration as Forgejo writes them (`90s`, `20m`, `1h30m`) or a number of seconds; at least one second. */
function durationSeconds(env: Env, name: string, fallback: number): number {
  const value = nonEmpty(env, name);
  if (value === undefined) return fallback;
  const units: Record<string, number> = { s: 1, m: 60, h: 3600 };
  let seconds = 0;
  if (/^\d{1,9}$/.test(value)) seconds = Number(value);
  else if (/^(\d{1,9}[hms])+$/.test(value)) for (const [, amount, unit] of value.matchAll(/(\d+)([hms])/g)) seconds += Number(amount) * units[unit];
  else throw new ConfigError(name, `not a duration: "${value}" (examples: 90s, 20m, 1h)`);
  if (seconds < 1 || seconds > 7 * 24 * 3600) throw new ConfigError(name, 'must be between 1s and 168h');
  return seconds;
}

function headerName(env: Env, name: string, fallback: string): string {
  const value = nonEmpty(env, name) ?? fallback;
  if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(value)) throw new ConfigError(name, `not a header name: "${value}"`);
  return value.toLowerCase();
}

/** A comma-separated list of CIDRs or addresses; an empty list trusts no proxy. */
function cidrs(env: Env, name: string, fallback: string[]): string[] {
  const raw = env[name];
  if (raw === undefined) return fallback;
  const items = raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  for (const item of items) {
    if (!parseCidr(item)) throw new ConfigError(name, `not a CIDR or an address: "${item}"`);
  }
  return items;
}

function parseHttpServer(env: Env): HttpConfig {
  const keepAliveTimeoutMs = integer(env, 'HTTP_KEEPALIVE_TIMEOUT', 65, { min: 1 }) * 1000;
  const headersTimeoutMs = integer(env, 'HTTP_HEADERS_TIMEOUT', keepAliveTimeoutMs / 1000 + 1, { min: 1 }) * 1000;
  if (headersTimeoutMs <= keepAliveTimeoutMs) {
    throw new ConfigError('HTTP_HEADERS_TIMEOUT', `must exceed HTTP_KEEPALIVE_TIMEOUT (${keepAliveTimeoutMs / 1000})`);
  }
  return {
    keepAliveTimeoutMs,
    headersTimeoutMs,
    requestTimeoutMs: integer(env, 'HTTP_REQUEST_TIMEOUT', 0, { min: 0 }) * 1000,
    bodyTimeoutMs: integer(env, 'HTTP_BODY_TIMEOUT', 30, { min: 1 }) * 1000,
    apiRequestTimeoutMs: integer(env, 'API_REQUEST_TIMEOUT', 60, { min: 0 }) * 1000,
    maxConnections: integer(env, 'HTTP_MAX_CONNECTIONS', 4096, { min: 0 }),
    maxConnectionsPerClient: integer(env, 'HTTP_MAX_CONNECTIONS_PER_CLIENT', 128, { min: 1 }),
    shutdownDelayMs: integer(env, 'SHUTDOWN_DELAY', 0, { min: 0, max: 600 }) * 1000,
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE', 5, { min: 0, max: 600 }) * 1000,
  };
}

function nonEmpty(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** A comma-separated list of `scheme://host[:port]` origins, or `*`. */
function origins(env: Env, name: string): string[] {
  const items = (nonEmpty(env, name) ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  return items.map((item) => {
    if (item === '*') return item;
    let url: URL;
    try {
      url = new URL(item);
    } catch {
      throw new ConfigError(name, `not an origin: "${item}"`);
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== item.replace(/\/$/, '')) {
      throw new ConfigError(name, `expected an origin such as https://example.com (no path), got "${item}"`);
    }
    return url.origin;
  });
}

function gitServingConfig(env: Env): GitConfig {
  const maxProcesses = integer(env, 'GIT_MAX_PROCESSES', 4 * os.availableParallelism(), { min: 1 });
  const half = Math.max(1, Math.ceil(maxProcesses / 2));
  // A user's share plus the batch readers' (at most half the cap) still leaves room for others.
  const quarter = Math.max(1, Math.ceil(maxProcesses / 4));
  return {
    maxProcesses,
    queueTimeoutMs: 1000 * integer(env, 'GIT_QUEUE_TIMEOUT', 10, { min: 0 }),
    idleTimeoutMs: 1000 * integer(env, 'GIT_IDLE_TIMEOUT', 600, { min: 1 }),
    drainTimeoutMs: 1000 * integer(env, 'GIT_DRAIN_TIMEOUT', 60, { min: 0 }),
    maxProcessesPerAddress: integer(env, 'GIT_MAX_PROCESSES_PER_ADDRESS', half, { min: 1 }),
    maxProcessesPerUser: integer(env, 'GIT_MAX_PROCESSES_PER_USER', quarter, { min: 1 }),
    maxProcessesAnonymous: integer(env, 'GIT_MAX_PROCESSES_ANONYMOUS', half, { min: 1 }),
    exchangeTimeoutMs: 1000 * integer(env, 'GIT_EXCHANGE_TIMEOUT', 3600, { min: 1 }),
    minTransferRate: byteSize(env, 'GIT_MIN_TRANSFER_RATE', 1024),
    transferWindowMs: 1000 * integer(env, 'GIT_TRANSFER_WINDOW', 30, { min: 1 }),
    requestBodyMaxBytes: byteSize(env, 'GIT_REQUEST_BODY_MAX_SIZE', 16 * 1024 ** 2),
    requestBodyTimeoutMs: 1000 * integer(env, 'GIT_REQUEST_BODY_TIMEOUT', 60, { min: 1 }),
    maxMemoryBytes: byteSize(env, 'GIT_MAX_MEMORY', 2 * 1024 ** 3),
    maxCpuSeconds: integer(env, 'GIT_MAX_CPU', 1800, { min: 1 }),
    commandMaxMemoryBytes: byteSize(env, 'GIT_COMMAND_MAX_MEMORY', 1024 ** 3),
    archiveMaxEntries: integer(env, 'GIT_ARCHIVE_MAX_FILES', 200_000, { min: 1 }),
    archiveMaxBytes: byteSize(env, 'GIT_ARCHIVE_MAX_SIZE', 4 * 1024 ** 3),
    treeMaxEntries: integer(env, 'GIT_MAX_TREE_ENTRIES', 1_000_000, { min: 1 }),
    cgroup: nonEmpty(env, 'GIT_CGROUP') ?? 'auto',
  };
}

function integer(env: Env, name: string, fallback: number, range: { min?: number; max?: number } = {}): number {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return fallback;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(name, `expected an integer, got "${raw}"`);
  const value = Number(raw);
  if (range.min !== undefined && value < range.min) throw new ConfigError(name, `must be at least ${range.min}`);
  if (range.max !== undefined && value > range.max) throw new ConfigError(name, `must be at most ${range.max}`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = nonEmpty(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `expected true or false, got "${raw}"`);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `expected one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

const BYTE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kb: 1000,
  mb: 1000 ** 2,
  gb: 1000 ** 3,
  tb: 1000 ** 4,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
};

/** Parses "-1", "4096", "1GiB", "500 MB" into bytes. */
export function parseByteSize(raw: string): number | undefined {
  const match = /^(-?\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(raw.trim());
  if (!match) return undefined;
  const unit = BYTE_UNITS[match[2].toLowerCase()];
  if (unit === undefined) return undefined;
  return Math.floor(Number(match[1]) * unit);
}

function byteSize(env: Env, name: string, fallback: number): number {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return fallback;
  const value = parseByteSize(raw);
  if (value === undefined) throw new ConfigError(name, `expected a size such as 1048576 or 1GiB, got "${raw}"`);
  return value;
}

function parseRootUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('ROOT_URL', `not a URL: "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError('ROOT_URL', `must be an http or https URL, got "${raw}"`);
  }
  url.search = '';
  url.hash = '';
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

/** `scheme://user@a:1,b:2/db` → [`scheme://user@a:1/db`, ['b:2']]; a URL with one host is returned as it is. */
function splitHosts(raw: string): [string, string[]] {
  const match = /^([a-z]+:\/\/(?:[^@/]*@)?)([^/?#]*)(.*)$/i.exec(raw);
  if (!match || !match[2].includes(',')) return [raw, []];
  const [first, ...more] = match[2].split(',');
  return [`${match[1]}${first}${match[3]}`, more];
}

function parseHost(text: string): { host: string; port: number } {
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/i.exec(text.trim());
  const port = match?.[2] === undefined ? 3306 : Number(match[2]);
  if (!match || port < 1 || port > 65535) throw new ConfigError('DATABASE_URL', `not a host: "${text}" (use host or host:port)`);
  return { host: match[1].replace(/^\[|\]$/g, ''), port };
}

function redactPassword(raw: string): string {
  return raw.replace(/^([a-z]+:\/\/[^:@/]*:)[^@/]*@/i, '$1***@');
}

export function parseDatabaseUrl(raw: string | undefined, dataDir: string): DatabaseConfig {
  if (raw === undefined) return { type: 'sqlite', file: path.join(dataDir, 'anvil.db') };
  // Several servers (the nodes of a cluster) are a comma-separated list where a URL has one host; the URL is
  // parsed with the first, the others apart.
  const [first, more] = splitHosts(raw);
  let url: URL;
  try {
    url = new URL(first);
  } catch {
    throw new ConfigError('DATABASE_URL', `not a URL: "${redactPassword(raw)}"`);
  }
  switch (url.protocol) {
    case 'sqlite:': {
      // sqlite:relative/path.db, sqlite:///absolute/path.db, sqlite::memory:
      const location = decodeURIComponent(raw.slice('sqlite:'.length).replace(/^\/\//, ''));
      if (location === '') throw new ConfigError('DATABASE_URL', 'sqlite URL names no file');
      return { type: 'sqlite', file: location === ':memory:' ? location : path.resolve(location) };
    }
    case 'mysql:':
    case 'mariadb:': {
      const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
      if (database === '') throw new ConfigError('DATABASE_URL', 'mysql URL names no database');
      const hosts = [{ host: url.hostname || '127.0.0.1', port: url.port ? Number(url.port) : 3306 }, ...more.map((host) => parseHost(host))];
      const socketPath = url.searchParams.get('socket') ?? undefined;
      if (socketPath !== undefined && !path.isAbsolute(socketPath)) throw new ConfigError('DATABASE_URL', `socket is not an absolute path: "${socketPath}"`);
      if (socketPath !== undefined && hosts.length > 1) throw new ConfigError('DATABASE_URL', 'a socket names one server: give it with one host');
      return {
        type: 'mysql',
        host: hosts[0].host,
        port: hosts[0].port,
        hosts,
        ...(socketPath === undefined ? {} : { socketPath }),
        username: decodeURIComponent(url.username) || 'root',
        password: decodeURIComponent(url.password),
        database,
      };
    }
    default:
      throw new ConfigError('DATABASE_URL', `unknown scheme "${url.protocol.replace(/:$/, '')}" (use mysql:// or sqlite:)`);
  }
}
