// One cohesive thing, kept whole though long: the settings schema, one slice per group of settings.

/*
 * Each slice is an abstract class merged with an interface of the same name: the class is the injection token
 * (a constructor that names `GitConfig` gets the git settings, with no @Inject), the interface is its shape, and
 * any object of that shape stands for it in a test. ConfigModule provides every slice from the one validated
 * AppConfig (config.ts); a service injects the narrowest slices it reads, never AppConfig.
 */

/** ROOT_URL: the public address, and what derives from it. */
export abstract class SiteConfig {}
export interface SiteConfig {
  /** Public base URL, always ending with '/'. */
  rootUrl: string;
  /** Host name of ROOT_URL: the no-reply e-mail domain and the SSH host. */
  rootHost: string;
}

/** DATA_DIR and SECRET_KEY: where Anvil keeps its files, and the key of the secrets it stores. */
export abstract class StorageConfig {}
export interface StorageConfig {
  dataDir: string;
  /** SECRET_KEY: encrypts stored secrets (mirror credentials); null = generated into DATA_DIR/secret_key. */
  secretKey: string | null;
  /** STORAGE_RESERVE: free space under DATA_DIR below which writes that need more are refused (507); 0 or absent = off. */
  storageReserveBytes?: number;
}

/** The start-up reconciliation of DATA_DIR against the database (src/integrity). */
export abstract class IntegrityConfig {}
export interface IntegrityConfig {
  /**
   * RECONCILE_STALE_AFTER (seconds): a temporary file, lock or half-made directory older than this is a crash's
   * leftover that the start-up reconciliation may clear; younger ones may belong to a live request of another
   * instance sharing DATA_DIR.
   */
  reconcileStaleAfterMs: number;
  /**
   * RECONCILE_START_BUDGET: how many repositories each start-up checks in full (sizes, git leftovers, missing
   * directories) in the background once it listens, continuing where the previous start stopped; `anvil doctor`
   * checks all of them.
   */
  reconcileStartBudget: number;
  /**
   * RECONCILE_PROCESS_LEASE (seconds): each server renews a row saying it is alive every third of this; when a
   * row lapses, any live instance clears what that process left half-made (src/integrity/process-liveness.ts).
   */
  processLeaseMs: number;
}

/** What the content API shows of a file. */
export abstract class ContentConfig {}
export interface ContentConfig {
  /** Files above this size are not inlined (base64) by GET /repos/{o}/{r}/contents (MAX_DISPLAY_FILE_SIZE). */
  maxDisplayFileBytes: number;
}

/** The issue tracker. */
export abstract class IssueConfig {}
export interface IssueConfig {
  /** ISSUE_MAX_PINNED: issues (and as many pull requests) a repository may pin; Forgejo's MAX_PINNED, 3. */
  maxPinnedIssues: number;
  /**
   * ISSUE_LIST_CACHE_MS: how long a page of issues or pull requests, once read, may answer the same question again
   * (0: never). Within an instance a page is dropped by any write it commits; other instances' writes show after
   * at most this long (src/database/recent-reads.ts).
   */
  listCacheMs: number;
}

/** Outgoing connections of migrations and mirrors. */
export abstract class NetworkConfig {}
export interface NetworkConfig {
  /** ALLOW_LOCAL_NETWORKS: migrations and mirrors may reach loopback and private addresses. */
  allowLocalNetworks: boolean;
}

/** LOG_LEVEL, LOG_FILE: the application log. */
export abstract class LogConfig {}
export interface LogConfig {
  logLevel: string;
  /** LOG_FILE: where the log goes instead of standard output. */
  logFile?: string;
  /** Without LOG_FILE, the log's stream: standard output for the server, standard error for the CLI. */
  logStream?: 'stdout' | 'stderr';
}

/** QUOTA_*: whether quotas apply, and what applies to a user in no quota group. */
export abstract class QuotaConfig {}
export interface QuotaConfig {
  enabled: boolean;
  defaultGroups: string[];
  defaultTotal: number;
}

/** DEFAULT_PAGING_NUM, MAX_RESPONSE_ITEMS: list pages. */
export abstract class PagingConfig {}
export interface PagingConfig {
  defaultLimit: number;
  maxLimit: number;
}

/** MARKDOWN_*: what one render may cost. */
export abstract class MarkdownConfig {}
export interface MarkdownConfig {
  maxBytes: number;
  renderBudgetMs: number;
  maxOutputBytes: number;
  rendersPerUser: number;
}

/** Largest release attachment and generic package file, streamed to disk (never held in memory). */
export abstract class UploadConfig {}
export interface UploadConfig {
  attachmentMaxBytes: number;
  packageMaxBytes: number;
}

/** Git LFS (src/lfs), with Forgejo's setting names. */
export abstract class LfsConfig {}
export interface LfsConfig {
  /** LFS_START_SERVER: serve the LFS API; off, its routes answer 404. */
  startServer: boolean;
  /** LFS_MAX_FILE_SIZE: largest object accepted, in bytes; 0 for no limit but quota. */
  maxFileBytes: number;
  /** LFS_MAX_BATCH_SIZE: most objects one batch request may name. */
  maxBatchSize: number;
  /** LFS_LOCKS_PAGING_NUM: most locks one page lists. */
  locksPagingNum: number;
  /** LFS_HTTP_AUTH_EXPIRY: how long a token from `git-lfs-authenticate` stays valid, in seconds. */
  httpAuthExpirySeconds: number;
  /** LFS_JWT_SECRET: the key that signs those tokens; null = generated into DATA_DIR/lfs_jwt_secret. */
  jwtSecret: string | null;
}

/** AUDIT_RETENTION_DAYS: how long audit events are kept. */
export abstract class AuditConfig {}
export interface AuditConfig {
  retentionDays: number;
}

/** Life behind a gateway: whose forwarding headers are believed, and sign-in by a header the gateway sets. */
export abstract class ReverseProxyConfig {}
export interface ReverseProxyConfig {
  /** REVERSE_PROXY_AUTH_ENABLED: the user named in `userHeader` by a trusted proxy is signed in. */
  authEnabled: boolean;
  /** Header names, lower-cased (Node's request headers are). */
  userHeader: string;
  emailHeader: string;
  fullNameHeader: string;
  /** REVERSE_PROXY_AUTO_REGISTRATION: an unknown user named by the gateway is created. */
  autoRegistration: boolean;
  /** REVERSE_PROXY_TRUSTED_PROXIES: CIDRs (or addresses) of the proxies whose headers are believed. */
  trustedProxies: string[];
  /**
   * REVERSE_PROXY_FORWARDING_HEADER: the one header (lower-cased) whose hops name the client; the gateway
   * writes it. Any other forwarding header is the client's own and is never read.
   */
  forwardingHeader: string;
}

/** Outgoing webhooks: who may be called, how hard Anvil tries, how long it remembers. */
export abstract class WebhookConfig {}
export interface WebhookConfig {
  /** WEBHOOK_ALLOWED_HOSTS: `loopback`, `private`, `external`, `*`, CIDRs and host globs, comma-separated. */
  allowedHosts: string;
  /** WEBHOOK_MAX_ATTEMPTS: tries of one delivery before it is given up. */
  maxAttempts: number;
  /** WEBHOOK_DELIVERY_WORKERS: requests one process has in flight at once. */
  workers: number;
  /** WEBHOOK_TIMEOUT (seconds): one request, connection to last byte of the answer. */
  timeoutMs: number;
  /** WEBHOOK_CONNECT_TIMEOUT (seconds): from the request's start until its connection is open (TLS included). */
  connectTimeoutMs: number;
  /** WEBHOOK_FIRST_BYTE_TIMEOUT (seconds): from the request's last byte sent until the answer's first. */
  firstByteTimeoutMs: number;
  /** WEBHOOK_SENDER_NICE (0–19, Linux): the nice value of the webhook delivery process (and of its autogroup). */
  senderNice: number;
  /** WEBHOOK_HISTORY_DAYS: finished deliveries are kept this long. */
  historyDays: number;
  /** WEBHOOK_PAYLOAD_COMMIT_LIMIT: commits listed in one push payload. */
  payloadCommitLimit: number;
  /** Fixed: how often an idle process looks for work another instance queued; 0 starts no timer. */
  pollMs: number;
  /** Fixed: first retry delay, doubled per attempt up to retryMaxMs. */
  retryBaseMs: number;
  /**
   * Fixed: a held lease is renewed with an outcome only when it was set this long ago (the next request then
   * still starts with WEBHOOK_TIMEOUT + 5 s less this of lease left).
   */
  leaseRenewMs: number;
  retryMaxMs: number;
}

/** Migrations and pull mirrors (docs/git-transports.md, docs/mirrors.md): concurrency and admission are settings. */
export abstract class MirrorConfig {}
export interface MirrorConfig {
  /** MIRROR_MAX_CONCURRENCY: mirror fetches one process runs at once. */
  maxConcurrency: number;
  /** MIRROR_SYNC_MAX_PER_USER: syncs of one owner's mirrors running at once, over every instance. */
  syncMaxPerOwner: number;
  /** MIRROR_MAX_PER_USER: pull mirrors one user or organisation may own (-1: no limit; site admins are exempt). */
  maxPerOwner: number;
  /** MIGRATION_MAX_CONCURRENCY: migrations running at once, over every instance sharing the database. */
  migrationMaxConcurrency: number;
  /** MIGRATION_MAX_PER_USER: migrations one user may have running at once, over every instance. */
  migrationMaxPerUser: number;
  /** MIGRATION_QUEUE_TIMEOUT: how long a migration waits for its turn before 503. */
  migrationQueueTimeoutMs: number;
  /**
   * MIRROR_LFS_MAX_OBJECTS, MIRROR_LFS_MAX_SIZE: the most LFS objects (and bytes) one migration or mirror sync
   * fetches; a mirror's next sync fetches what was left.
   */
  lfsMaxObjects: number;
  lfsMaxBytes: number;
  /** MIRROR_LFS_TIMEOUT: how long one migration or sync may spend fetching LFS objects. */
  lfsTimeoutMs: number;
  /** Fixed: 600 s for a migration clone, 300 s for a mirror fetch. */
  cloneTimeoutMs: number;
  fetchTimeoutMs: number;
  /** Fixed: the scheduler ticks every 60 s; 0 starts no timer (tests drive ticks themselves). */
  tickMs: number;
}

/** Settings for life behind a gateway (SECURITY.md; README, "Behind your gateway"). */
export abstract class HttpConfig {}
export interface HttpConfig {
  /** Idle keep-alive connections are kept this long; above a gateway's idle timeout (commonly 60 s). */
  keepAliveTimeoutMs: number;
  /** Time to receive a request's headers; above keepAliveTimeoutMs, as Node requires. */
  headersTimeoutMs: number;
  /**
   * Time to receive a whole request (0: none, the default): Node's 300 s would cut long pushes, and git
   * exchanges end by their own idle limit (docs/git-transports.md); API routes have bodyTimeoutMs.
   */
  requestTimeoutMs: number;
  /** Time an API route waits for its body once it starts reading it. */
  bodyTimeoutMs: number;
  /**
   * API_REQUEST_TIMEOUT: time an /api/v1 JSON route's handler has to answer before a 503 (0: none). Not git,
   * not streamed uploads, downloads or archives (src/http/request-timeout.ts).
   */
  apiRequestTimeoutMs: number;
  /** Concurrent connections of the whole server (0: unlimited) and of one client address. */
  maxConnections: number;
  maxConnectionsPerClient: number;
  /**
   * SHUTDOWN_DELAY: on SIGTERM, how long the instance goes on serving, with /api/healthz/ready answering 503,
   * before it stops listening (a gateway's health-check interval times its failure count).
   */
  shutdownDelayMs: number;
  /**
   * SHUTDOWN_GRACE: once the listener is closed, how long a request arriving on a connection already open is still
   * answered (with `Connection: close`) before idle connections are closed.
   */
  shutdownGraceMs: number;
}

/** Requests allowed per window; 0 turns a limit off. */
export abstract class RateLimitConfig {}
export interface RateLimitConfig {
  /**
   * RATE_LIMIT_STORE: where the counts live. `memory` (default): this process only; `database`: the
   * `rate_limit` table of DATABASE_URL, so that every instance on that database shares one budget.
   */
  store: 'memory' | 'database';
  windowMs: number;
  signInPerIp: number;
  signInPerAccount: number;
  markdown: number;
  tokenCreation: number;
  keyUpload: number;
  /** Attempts at the change-password page, per client address and user name. */
  changePassword: number;
  /** Failed requests (4xx) to the OAuth2 authorize, token, userinfo and sign-in endpoints, per client address. */
  oauth2: number;
  /** Every request to those endpoints, per client address: a generous cap, for floods of successes. */
  oauth2Requests: number;
}

/** The built-in SSH server (docs/git-transports.md). */
export abstract class SshConfig {}
export interface SshConfig {
  enabled: boolean;
  listenHost: string;
  /** 0 takes a free port. */
  listenPort: number;
  /** The port advertised in `ssh_url`; null follows the port actually bound. */
  advertisedPort: number | null;
  /** The only login name accepted, and the user part of `ssh_url`. */
  user: string;
  hostKeyFile: string;
  /** SSH_LOGIN_GRACE_TIME: a connection that has not logged in within this time is closed. */
  loginGraceMs: number;
  /** SSH_MAX_CONNECTIONS: open connections in all, logged in or not; more are closed at once. */
  maxConnections: number;
  /** SSH_MAX_UNAUTHENTICATED: connections not (yet) logged in, in all and from one address. */
  maxUnauthenticated: number;
  maxUnauthenticatedPerAddress: number;
  /** SSH_MAX_AUTH_TRIES: refused login attempts before the connection is closed. */
  maxAuthTries: number;
}

/** Limits of the git processes that serve clones and pushes (docs/git-transports.md). */
export abstract class GitConfig {}
export interface GitConfig {
  /** At most this many serving git processes at once. */
  maxProcesses: number;
  /** How long a request waits for a free slot before 503. */
  queueTimeoutMs: number;
  /** An exchange where no byte moved for this long is closed. */
  idleTimeoutMs: number;
  /** On shutdown, how long running git processes may go on before they are killed. */
  drainTimeoutMs: number;
  /**
   * Slots one client may hold at once: per address (any caller), per signed-in user, and for anonymous
   * callers all together; an anonymous address gets half its address share. Work beyond a share waits.
   */
  maxProcessesPerAddress: number;
  maxProcessesPerUser: number;
  maxProcessesAnonymous: number;
  /** Longest a whole git exchange (clone, fetch, push) may run. */
  exchangeTimeoutMs: number;
  /**
   * While waiting on the peer (its request body, or room to write the answer), at least minTransferRate bytes a
   * second must move, measured over each transferWindowMs; a slower peer loses its exchange and its slot.
   */
  minTransferRate: number;
  transferWindowMs: number;
  /** An upload-pack request body is read whole before git starts: at most this many bytes, within this time. */
  requestBodyMaxBytes: number;
  requestBodyTimeoutMs: number;
  /** Address space (bytes) and CPU time (s) of each serving git process (clones, fetches, pushes, mirrors). */
  maxMemoryBytes: number;
  maxCpuSeconds: number;
  /** Address space of the content API's git commands (their CPU time follows their time limit). */
  commandMaxMemoryBytes: number;
  /** Archives: at most this many files and bytes before git starts writing (413 beyond). */
  archiveMaxEntries: number;
  archiveMaxBytes: number;
  /**
   * GIT_MAX_TREE_ENTRIES: the most paths (files and directories at any depth) one commit's tree may expand to.
   * A push bringing a larger one is refused, and listings and history walks of one answer 422 before git runs.
   */
  treeMaxEntries: number;
  /**
   * GIT_CGROUP: where each git's memory limit is a cgroup v2 of its own (`memory.max`, `cpu.max`): `auto` (the
   * server's own cgroup, when delegated to it), `off`, or the path of a delegated cgroup; rlimits otherwise.
   */
  cgroup: string;
}

/**
 * DATABASE_CONNECT_TIMEOUT, DATABASE_ACQUIRE_TIMEOUT, DATABASE_QUERY_TIMEOUT (seconds): a database that refuses,
 * hangs or is saturated costs a request at most these, then a 503, instead of a request that never ends.
 * MySQL/MariaDB only: SQLite runs in the process.
 */
export interface DatabaseTimeouts {
  connectMs: number;
  acquireMs: number;
  queryMs: number;
}

export type DatabaseConfig =
  | { type: 'sqlite'; file: string }
  | {
      type: 'mysql';
      /** The first of `hosts`. */
      host: string;
      port: number;
      /** Every server named in DATABASE_URL (`mysql://user@a:3306,b:3306/db`), tried in this order. */
      hosts: { host: string; port: number }[];
      /** A Unix socket of a server on this machine (`?socket=` in DATABASE_URL), used instead of `host`. */
      socketPath?: string;
      username: string;
      password: string;
      database: string;
    };
