import * as path from 'node:path';
import { ConfigError, loadConfig, parseByteSize } from './config';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.dataDir).toBe(path.resolve('./data'));
    expect(config.database).toEqual({ type: 'sqlite', file: path.resolve('./data/anvil.db') });
    expect(config.rootUrl).toBe('http://localhost:3000/');
    expect(config.rootHost).toBe('localhost');
    expect(config.quota).toEqual({ enabled: true, defaultGroups: [], defaultTotal: -1 });
    expect(config.allowLocalNetworks).toBe(false);
    expect(config.paging).toEqual({ defaultLimit: 30, maxLimit: 50 });
    expect(config.ssh).toEqual({
      enabled: true,
      listenHost: '0.0.0.0',
      listenPort: 2222,
      advertisedPort: null,
      user: 'git',
      hostKeyFile: path.resolve('./data/ssh/ssh_host_ed25519_key'),
      loginGraceMs: 60_000,
      maxConnections: 512,
      maxUnauthenticated: 64,
      maxUnauthenticatedPerAddress: 8,
      maxAuthTries: 6,
    });
    const cap = 4 * require('node:os').availableParallelism();
    expect(config.git.maxProcesses).toBe(cap);
    expect(config.git).toMatchObject({
      queueTimeoutMs: 10_000,
      idleTimeoutMs: 600_000,
      drainTimeoutMs: 60_000,
      maxProcessesPerAddress: Math.ceil(cap / 2),
      maxProcessesPerUser: Math.ceil(cap / 4),
      maxProcessesAnonymous: Math.ceil(cap / 2),
      exchangeTimeoutMs: 3_600_000,
      minTransferRate: 1024,
      transferWindowMs: 30_000,
      requestBodyMaxBytes: 16 * 1024 ** 2,
      requestBodyTimeoutMs: 60_000,
      maxMemoryBytes: 2 * 1024 ** 3,
      maxCpuSeconds: 1800,
      commandMaxMemoryBytes: 1024 ** 3,
      archiveMaxEntries: 200_000,
      archiveMaxBytes: 4 * 1024 ** 3,
      treeMaxEntries: 1_000_000,
      cgroup: 'auto',
    });
  });

  it('reads the SSH and git process settings', () => {
    const config = loadConfig({
      SSH_ENABLED: 'false',
      SSH_LISTEN_HOST: '127.0.0.1',
      SSH_LISTEN_PORT: '0',
      SSH_PORT: '22',
      SSH_USER: 'forge',
      SSH_HOST_KEY: '/etc/anvil/host_key',
      GIT_MAX_PROCESSES: '3',
      GIT_QUEUE_TIMEOUT: '0',
      GIT_IDLE_TIMEOUT: '30',
      GIT_DRAIN_TIMEOUT: '5',
      GIT_MAX_PROCESSES_PER_ADDRESS: '2',
      GIT_MAX_PROCESSES_PER_USER: '1',
      GIT_MAX_PROCESSES_ANONYMOUS: '1',
      GIT_EXCHANGE_TIMEOUT: '60',
      GIT_MIN_TRANSFER_RATE: '2KiB',
      GIT_TRANSFER_WINDOW: '5',
      GIT_REQUEST_BODY_MAX_SIZE: '1MiB',
      GIT_REQUEST_BODY_TIMEOUT: '7',
      GIT_MAX_MEMORY: '512MiB',
      GIT_MAX_CPU: '90',
      GIT_COMMAND_MAX_MEMORY: '256MiB',
      GIT_ARCHIVE_MAX_FILES: '1000',
      GIT_ARCHIVE_MAX_SIZE: '10MiB',
      GIT_MAX_TREE_ENTRIES: '5000',
      GIT_CGROUP: 'off',
      SSH_LOGIN_GRACE_TIME: '20',
      SSH_MAX_CONNECTIONS: '100',
      SSH_MAX_UNAUTHENTICATED: '10',
      SSH_MAX_UNAUTHENTICATED_PER_ADDRESS: '2',
      SSH_MAX_AUTH_TRIES: '3',
    });
    expect(config.ssh).toEqual({
      enabled: false,
      listenHost: '127.0.0.1',
      listenPort: 0,
      advertisedPort: 22,
      user: 'forge',
      hostKeyFile: '/etc/anvil/host_key',
      loginGraceMs: 20_000,
      maxConnections: 100,
      maxUnauthenticated: 10,
      maxUnauthenticatedPerAddress: 2,
      maxAuthTries: 3,
    });
    expect(config.git).toEqual({
      maxProcesses: 3,
      queueTimeoutMs: 0,
      idleTimeoutMs: 30_000,
      drainTimeoutMs: 5_000,
      maxProcessesPerAddress: 2,
      maxProcessesPerUser: 1,
      maxProcessesAnonymous: 1,
      exchangeTimeoutMs: 60_000,
      minTransferRate: 2048,
      transferWindowMs: 5_000,
      requestBodyMaxBytes: 1024 ** 2,
      requestBodyTimeoutMs: 7_000,
      maxMemoryBytes: 512 * 1024 ** 2,
      maxCpuSeconds: 90,
      commandMaxMemoryBytes: 256 * 1024 ** 2,
      archiveMaxEntries: 1000,
      archiveMaxBytes: 10 * 1024 ** 2,
      treeMaxEntries: 5000,
      cgroup: 'off',
    });
    expect(() => loadConfig({ SSH_MAX_AUTH_TRIES: '0' })).toThrow(/SSH_MAX_AUTH_TRIES/);
    expect(() => loadConfig({ GIT_MAX_PROCESSES: '0' })).toThrow(/GIT_MAX_PROCESSES/);
    expect(() => loadConfig({ SSH_PORT: '0' })).toThrow(/SSH_PORT/);
  });

  it('reads HEAP_GROWTH_PERCENT (30 by default, 0 for V8 own heuristics)', () => {
    expect(loadConfig({}).heapGrowthPercent).toBe(30);
    expect(loadConfig({ HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent).toBe(0);
    expect(() => loadConfig({ HEAP_GROWTH_PERCENT: '-1' })).toThrow(/HEAP_GROWTH_PERCENT/);
  });

  it('normalises ROOT_URL to end with a slash', () => {
    expect(loadConfig({ ROOT_URL: 'https://git.example.com/forge' }).rootUrl).toBe('https://git.example.com/forge/');
    expect(loadConfig({ ROOT_URL: 'https://git.example.com/forge' }).rootHost).toBe('git.example.com');
  });

  it('derives the default ROOT_URL from PORT', () => {
    expect(loadConfig({ PORT: '8080' }).rootUrl).toBe('http://localhost:8080/');
  });

  it('reads a MySQL DATABASE_URL', () => {
    expect(loadConfig({ DATABASE_URL: 'mysql://anvil:s%40cret@db.internal:3307/forge' }).database).toEqual({
      type: 'mysql',
      host: 'db.internal',
      port: 3307,
      hosts: [{ host: 'db.internal', port: 3307 }],
      username: 'anvil',
      password: 's@cret',
      database: 'forge',
    });
  });

  it('reads a Unix socket in a MySQL DATABASE_URL, and refuses a relative one or one with several hosts', () => {
    expect(loadConfig({ DATABASE_URL: 'mysql://anvil@localhost/forge?socket=%2Frun%2Fmysqld%2Fmysqld.sock' }).database).toEqual({
      type: 'mysql',
      host: 'localhost',
      port: 3306,
      hosts: [{ host: 'localhost', port: 3306 }],
      socketPath: '/run/mysqld/mysqld.sock',
      username: 'anvil',
      password: '',
      database: 'forge',
    });
    expect(loadConfig({ DATABASE_URL: 'mysql://anvil@localhost/forge?socket=/run/mysqld/mysqld.sock' }).database).toMatchObject({
      socketPath: '/run/mysqld/mysqld.sock',
      database: 'forge',
    });
    expect(() => loadConfig({ DATABASE_URL: 'mysql://anvil@localhost/forge?socket=mysqld.sock' })).toThrow(/socket is not an absolute path/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://anvil@db1,db2/forge?socket=/run/mysqld/mysqld.sock' })).toThrow(/one host/);
  });

  it('reads several hosts in a MySQL DATABASE_URL (the nodes of a cluster), in their order', () => {
    expect(loadConfig({ DATABASE_URL: 'mysql://anvil:pw@db1:3307,db2,[::1]:3309/forge' }).database).toEqual({
      type: 'mysql',
      host: 'db1',
      port: 3307,
      hosts: [
        { host: 'db1', port: 3307 },
        { host: 'db2', port: 3306 },
        { host: '::1', port: 3309 },
      ],
      username: 'anvil',
      password: 'pw',
      database: 'forge',
    });
  });

  it('reads a SQLite DATABASE_URL', () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite:///var/lib/anvil/anvil.db' }).database).toEqual({ type: 'sqlite', file: '/var/lib/anvil/anvil.db' });
  });

  it('parses quota settings', () => {
    const config = loadConfig({ QUOTA_ENABLED: 'false', QUOTA_DEFAULT_GROUPS: ' a, b ,,c', QUOTA_DEFAULT_TOTAL: '1GiB' });
    expect(config.quota).toEqual({ enabled: false, defaultGroups: ['a', 'b', 'c'], defaultTotal: 1024 ** 3 });
  });

  it.each([
    [{ DATABASE_URL: 'postgres://localhost/db' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'mysql://localhost/' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'mysql://db1,db2:99999/forge' }, 'DATABASE_URL'],
    [{ SHUTDOWN_DELAY: '-1' }, 'SHUTDOWN_DELAY'],
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ ROOT_URL: 'ftp://example.com' }, 'ROOT_URL'],
    [{ QUOTA_ENABLED: 'maybe' }, 'QUOTA_ENABLED'],
    [{ ALLOW_LOCAL_NETWORKS: 'perhaps' }, 'ALLOW_LOCAL_NETWORKS'],
    [{ QUOTA_DEFAULT_TOTAL: 'lots' }, 'QUOTA_DEFAULT_TOTAL'],
    [{ MAX_RESPONSE_ITEMS: '0' }, 'MAX_RESPONSE_ITEMS'],
    [{ DEFAULT_PAGING_NUM: '60' }, 'DEFAULT_PAGING_NUM'],
    [{ CORS_ALLOWED_ORIGINS: 'https://example.com/path' }, 'CORS_ALLOWED_ORIGINS'],
    [{ CORS_ALLOWED_ORIGINS: 'example.com' }, 'CORS_ALLOWED_ORIGINS'],
    [{ METRICS_ENABLED: 'sometimes' }, 'METRICS_ENABLED'],
  ])('refuses %j with an error naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`^invalid configuration: ${variable}: `));
  });
});

describe('CORS_ALLOWED_ORIGINS and METRICS_*', () => {
  it('defaults to no origins and metrics off', () => {
    const config = loadConfig({});
    expect(config.corsAllowedOrigins).toEqual([]);
    expect(config.metrics).toEqual({ enabled: false, token: undefined });
  });

  it('reads a comma-separated list of origins (a trailing slash tolerated), or *', () => {
    expect(loadConfig({ CORS_ALLOWED_ORIGINS: 'https://a.example, http://127.0.0.1:8080/' }).corsAllowedOrigins).toEqual([
      'https://a.example',
      'http://127.0.0.1:8080',
    ]);
    expect(loadConfig({ CORS_ALLOWED_ORIGINS: '*' }).corsAllowedOrigins).toEqual(['*']);
  });

  it('reads METRICS_ENABLED and METRICS_TOKEN', () => {
    expect(loadConfig({ METRICS_ENABLED: 'true', METRICS_TOKEN: 's3cret' }).metrics).toEqual({ enabled: true, token: 's3cret' });
  });
});

describe('parseByteSize', () => {
  it.each([
    ['-1', -1],
    ['4096', 4096],
    ['1KiB', 1024],
    ['1 MB', 1_000_000],
    ['2gib', 2 * 1024 ** 3],
  ])('%s is %d bytes', (raw, bytes) => {
    expect(parseByteSize(raw)).toBe(bytes);
  });

  it('refuses unknown units', () => {
    expect(parseByteSize('3 parsecs')).toBeUndefined();
  });
});

describe('mirror settings', () => {
  it('defaults to 4 concurrent mirror fetches, the fixed time limits and a generated secret key', () => {
    const config = loadConfig({ DATA_DIR: '/tmp/anvil-config-test' });
    expect(config.mirrors).toEqual({
      maxConcurrency: 4,
      cloneTimeoutMs: 600_000,
      fetchTimeoutMs: 300_000,
      tickMs: 60_000,
      maxPerOwner: 20,
      syncMaxPerOwner: 2,
      migrationMaxConcurrency: 4,
      migrationMaxPerUser: 2,
      migrationQueueTimeoutMs: 60_000,
      lfsMaxObjects: 1000,
      lfsMaxBytes: 4 * 1024 ** 3,
      lfsTimeoutMs: 600_000,
    });
    expect(config.secretKey).toBeNull();
  });

  it('reads MIRROR_MAX_CONCURRENCY and SECRET_KEY, and refuses a concurrency below 1', () => {
    const config = loadConfig({ MIRROR_MAX_CONCURRENCY: '9', SECRET_KEY: 'a key' });
    expect(config.mirrors.maxConcurrency).toBe(9);
    expect(config.secretKey).toBe('a key');
    expect(() => loadConfig({ MIRROR_MAX_CONCURRENCY: '0' })).toThrow('invalid configuration: MIRROR_MAX_CONCURRENCY: must be at least 1');
  });
});
