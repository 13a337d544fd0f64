import * as fs from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { GitConfig, StorageConfig } from '../config/slices';
import { budgetedGit } from './git-budget';
import { addressKey, currentGitClient, GitClient } from './git-client';
import { gitEnvironment, gitHome } from './git-environment';
import { GitShares } from './git-shares';
import { PushAllowance, PushContext, PushHooks } from './push-hooks';
import { GitChildProcess, startGit } from './spawn-git';
import { GitLauncher } from './git-launcher';
import { TransferWatch } from './transfer-watch';

// One cohesive thing, kept whole though long: the cap on git processes (slots, queue, drain) across transports.

/** No slot became free in time, or the server is shutting down: HTTP answers 503, SSH an error line. */
export class GitBusyError extends Error {
  constructor(message = 'too many git operations are running, try again later') {
    super(message);
    this.name = 'GitBusyError';
  }
}

/** git could not be started (no descriptors, processes or memory left): answered as busy, its slot freed. */
export class GitSpawnError extends GitBusyError {
  constructor(cause: unknown) {
    super('the server is out of resources (processes, file descriptors or memory), try again later');
    this.name = 'GitSpawnError';
    this.cause = cause;
  }
}

export type GitService = 'upload-pack' | 'receive-pack' | 'upload-archive';

export interface ServeSpec {
  service: GitService;
  /** The repository directory. */
  dir: string;
  /** Smart HTTP: one request, one response (`--stateless-rpc`). */
  statelessRpc?: boolean;
  /** Smart HTTP `info/refs`: only the ref advertisement. */
  advertiseRefs?: boolean;
  /** A validated GIT_PROTOCOL value (`version=2`). */
  protocol?: string;
  /** Required for receive-pack: whose push it is, for the hooks. */
  push?: PushContext;
  /** Whom it serves: the slot counts against this client's share (GitShares). */
  client?: GitClient;
  /**
   * Aborted when the client goes away (its connection or channel closes). A request with one waits for a slot as
   * long as its client stays (at most GIT_EXCHANGE_TIMEOUT), instead of GIT_QUEUE_TIMEOUT: git does not retry a
   * refused clone, and a CI fan-out of one user is then served in turn rather than refused.
   */
  connection?: AbortSignal;
}

/** Requests one client address may have waiting for a slot, as a multiple of its share; more are refused. */
const WAITING_PER_SHARE = 4;

/** Limits of one exchange, from GIT_EXCHANGE_TIMEOUT, GIT_MIN_TRANSFER_RATE and GIT_TRANSFER_WINDOW. */
export interface ExchangeLimits {
  idleTimeoutMs: number;
  exchangeTimeoutMs: number;
  minTransferRate: number;
  transferWindowMs: number;
}

/** Forgejo's safeGitProtocolHeader: other values are ignored, and git then speaks v0. */
export function isSafeGitProtocol(value: string): boolean {
  return /^[0-9a-zA-Z]+=[0-9a-zA-Z]+(:[0-9a-zA-Z]+=[0-9a-zA-Z]+)*$/.test(value);
}

/** How long a killed process gets to clean up (quarantine directories) before SIGKILL. */
const KILL_GRACE_MS = 5_000;

/** A serving git process; its exit status, or null when it was killed or could not start. */
export class ServingProcess {
  readonly exited: Promise<number | null>;
  private lastActivity = Date.now();
  private killed = false;
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly deadline: NodeJS.Timeout;
  private watch: TransferWatch | null = null;
  private input: { source: Readable; ended: boolean } | null = null;
  private output: Writable | null = null;

  constructor(
    readonly child: GitChildProcess,
    private readonly limits: ExchangeLimits,
    onExit: () => void,
  ) {
    // However busy both ends are, an exchange ends by its total time limit.
    this.deadline = setTimeout(() => this.kill(), limits.exchangeTimeoutMs);
    this.deadline.unref();
    this.exited = new Promise((resolve) => {
      child.on('error', () => undefined);
      child.on('close', (code: number | null) => {
        if (this.idleTimer) clearTimeout(this.idleTimer);
        clearTimeout(this.deadline);
        this.watch?.stop();
        onExit();
        resolve(this.killed ? null : code);
      });
    });
    const touch = () => {
      this.lastActivity = Date.now();
    };
    child.stdout.on('data', touch);
    child.stderr.on('data', touch);
    // Writes into a process that has exited are not errors of ours; the exit status tells.
    child.stdin.on('error', () => undefined);
    this.watchIdle();
  }

  /**
   * Streams `source` into git's standard input, with backpressure; each chunk counts as activity. While the
   * source is open and git keeps up with it, the exchange waits on the peer (the minimum transfer rate).
   */
  feed(source: Readable, options: { peerPaced?: boolean } = {}): void {
    const input = { source, ended: false };
    if (options.peerPaced !== false) this.input = input;
    source.on('data', (chunk: Buffer) => {
      this.lastActivity = Date.now();
      this.watch?.count(chunk.length);
    });
    source.on('end', () => {
      input.ended = true;
    });
    source.pipe(this.child.stdin);
    this.watchTransfer();
  }

  /**
   * Sends git's standard output to `destination` (not ending it: the caller decides how the exchange ends);
   * while the destination is full, the exchange waits on the peer (the minimum transfer rate).
   */
  deliver(destination: Writable): void {
    this.output = destination;
    this.child.stdout.on('data', (chunk: Buffer) => this.watch?.count(chunk.length));
    this.child.stdout.pipe(destination, { end: false });
    this.watchTransfer();
  }

  /** Stops git and whatever it started (pack-objects, hooks): the whole process group. */
  kill(): void {
    if (this.killed || this.child.exitCode !== null || this.child.pid === undefined) return;
    this.killed = true;
    const pid = this.child.pid;
    this.watch?.stop();
    signalGroup(pid, 'SIGTERM');
    // Nobody takes the rest of its answer: a standard output paused for a peer that stopped reading would
    // otherwise stay open, and the process would count as running (holding its slot) until that peer left.
    this.child.stdout.unpipe();
    this.child.stdout.destroy();
    const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), KILL_GRACE_MS);
    timer.unref();
    void this.exited.then(() => clearTimeout(timer));
  }

  /** One timer per process, re-armed for the remaining time rather than reset on every chunk. */
  private watchIdle(): void {
    const idleTimeoutMs = this.limits.idleTimeoutMs;
    const check = () => {
      const idle = Date.now() - this.lastActivity;
      if (idle >= idleTimeoutMs) return this.kill();
      this.idleTimer = setTimeout(check, idleTimeoutMs - idle);
      this.idleTimer.unref();
    };
    this.idleTimer = setTimeout(check, idleTimeoutMs);
    this.idleTimer.unref();
  }

  private watchTransfer(): void {
    if (this.watch || this.killed) return;
    this.watch = new TransferWatch({
      minRate: this.limits.minTransferRate,
      windowMs: this.limits.transferWindowMs,
      waitingOnPeer: () => this.waitingOnPeer(),
      onStall: () => this.kill(),
    });
  }

  /** The request body is still coming and git is not the one behind, or the answer has no room to go. */
  private waitingOnPeer(): boolean {
    const input = this.input;
    if (input && !input.ended && !this.child.stdin.writableNeedDrain && this.child.stdin.writable) return true;
    return this.output !== null && this.output.writableNeedDrain === true;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * The git processes that serve clones, fetches and pushes over both transports (docs/git-transports.md,
 * "Limits"): the server-side options, the isolated environment, the hooks, at most GIT_MAX_PROCESSES at once
 * (further requests wait up to GIT_QUEUE_TIMEOUT for a slot), an idle limit, and draining on shutdown.
 */
@Injectable()
export class GitProcesses implements BeforeApplicationShutdown {
  private readonly logger = new Logger('GitProcesses');
  private readonly running = new Set<ServingProcess>();
  private readonly waiting: Waiter[] = [];
  private slotsInUse = 0;
  private readonly shares: GitShares;
  private draining = false;
  private readonly reclaimers: (() => boolean)[] = [];

  constructor(
    private readonly storageConfig: StorageConfig,
    private readonly gitConfig: GitConfig,
    private readonly hooks: PushHooks,
    private readonly launcher: GitLauncher,
  ) {
    this.shares = new GitShares({
      perAddress: gitConfig.maxProcessesPerAddress ?? gitConfig.maxProcesses,
      perUser: gitConfig.maxProcessesPerUser ?? gitConfig.maxProcesses,
      anonymous: gitConfig.maxProcessesAnonymous ?? gitConfig.maxProcesses,
    });
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /** Serving git processes now running. */
  get runningCount(): number {
    return this.running.size;
  }

  /** Slots taken now: serving processes, the content API's commands and the batch readers. */
  get slotsHeld(): number {
    return this.slotsInUse;
  }

  /** Slots taken on behalf of clients (requests), not by the server's own readers and walks. */
  get clientSlotsHeld(): number {
    return this.shares.held;
  }

  /** Requests waiting for a slot. */
  get queuedCount(): number {
    return this.waiting.length;
  }

  /**
   * Waits for a slot (GitBusyError when none frees in time, or at once when the client already has
   * WAITING_PER_SHARE times its share waiting), then starts git.
   */
  async start(spec: ServeSpec): Promise<ServingProcess> {
    // A push's quota is reserved before git reads a byte of its pack, and given back when git has exited.
    const allowance = spec.service === 'receive-pack' && !spec.advertiseRefs ? await this.hooks.allowance(requirePush(spec)) : null;
    try {
      await this.acquireSlot(spec.client, spec.connection);
    } catch (error) {
      await allowance?.release();
      throw error;
    }
    try {
      return await this.spawn(spec, allowance);
    } catch (error) {
      this.releaseSlot(spec.client);
      await allowance?.release();
      throw error;
    }
  }

  /**
   * Runs plumbing (the content API's reads and writes) inside one slot of the same cap, so that API traffic and
   * clones together never run more than GIT_MAX_PROCESSES git processes; waits like `start` (GitBusyError).
   */
  async withSlot<T>(work: () => Promise<T>, client: GitClient | undefined = currentGitClient()): Promise<T> {
    await this.acquireSlot(client);
    try {
      return await work();
    } finally {
      this.releaseSlot(client);
    }
  }

  /**
   * A slot for a long-lived process (the batch readers of git-object-readers.ts): waits like `start`, and hands
   * back the release, to call once that process has exited.
   */
  async reserveSlot(): Promise<() => void> {
    await this.acquireSlot();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.releaseSlot();
    };
  }

  /**
   * Long-lived holders of slots (batch readers) register here: when a caller would have to wait for a slot, one
   * holder that has been idle for a while is asked to stop, so that idle readers do not keep clones or pushes
   * waiting (the freed slot goes to the first waiter).
   */
  onSlotWanted(reclaim: () => boolean): void {
    this.reclaimers.push(reclaim);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.draining = true;
    for (const waiter of this.waiting.splice(0)) waiter.refuse(new GitBusyError('the server is shutting down'));
    if (this.running.size === 0) return;
    this.logger.log(`waiting for ${this.running.size} git process(es) to finish`);
    const all = Promise.all([...this.running].map((serving) => serving.exited));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.gitConfig.drainTimeoutMs);
    });
    if ((await Promise.race([all, timeout])) === 'timeout') {
      this.logger.warn(`killing ${this.running.size} git process(es) still running at shutdown`);
      for (const serving of this.running) serving.kill();
      await all;
    }
    clearTimeout(timer);
  }

  private async spawn(spec: ServeSpec, allowance: PushAllowance | null = null): Promise<ServingProcess> {
    const args = [
      `-c`,
      `core.hooksPath=${this.hooks.hooksDir}`,
      `-c`,
      'receive.hideRefs=refs/pull/',
      // Pushed objects are checked (a tree entry named `..` or `.git`, a malformed commit) before any ref moves.
      `-c`,
      'receive.fsckObjects=true',
      `-c`,
      'uploadpack.allowFilter=true',
      // A sparse:oid filter makes upload-pack parse a blob the client names as a sparse-checkout pattern list
      // and match every path of the clone against it: unbounded work chosen by the client. blob:none, blob:limit
      // and tree:<depth> filters stay.
      `-c`,
      'uploadpackfilter.sparse:oid.allow=false',
      `-c`,
      'uploadpack.allowAnySHA1InWant=true',
      // A pack larger than the push may add is refused while it arrives, not once stored.
      ...(allowance ? ['-c', `receive.maxInputSize=${Math.max(1, allowance.maxInputBytes)}`] : []),
      spec.service,
    ];
    if (spec.statelessRpc) args.push('--stateless-rpc');
    if (spec.advertiseRefs) args.push('--advertise-refs');
    args.push(spec.dir);
    const push = spec.service === 'receive-pack' && !spec.advertiseRefs ? this.hooks.begin(requirePush(spec)) : null;
    const env = gitEnvironment(this.storageConfig.dataDir, {
      ...(spec.protocol ? { GIT_PROTOCOL: spec.protocol } : {}),
      ...(push?.env ?? {}),
    });
    let child: GitChildProcess;
    try {
      fs.mkdirSync(gitHome(this.storageConfig.dataDir), { recursive: true });
      // A process group of its own, so that killing git also stops the helpers it started.
      child = await startGit(
        this.launcher,
        args,
        { env, processGroup: true },
        { memoryBytes: this.gitConfig.maxMemoryBytes, cpuSeconds: this.gitConfig.maxCpuSeconds },
      );
    } catch (error) {
      // Nothing runs: the caller frees the slot (start), the push's hooks are ended here; the server goes on.
      push?.end();
      this.logger.warn(`git could not be started: ${(error as Error).message}`);
      throw new GitSpawnError(error);
    }
    const git = this.gitConfig;
    const limits: ExchangeLimits = {
      idleTimeoutMs: git.idleTimeoutMs,
      exchangeTimeoutMs: git.exchangeTimeoutMs ?? 3_600_000,
      minTransferRate: git.minTransferRate ?? 0,
      transferWindowMs: git.transferWindowMs ?? 30_000,
    };
    const serving: ServingProcess = new ServingProcess(child, limits, () => {
      this.running.delete(serving);
      push?.end();
      void allowance?.release().catch((error: Error) => this.logger.warn(`push quota reservation not released: ${error.message}`));
      this.releaseSlot(spec.client);
    });
    this.running.add(serving);
    return serving;
  }

  /**
   * A slot, when one is free and the client is within its share; otherwise the caller waits for the first
   * released slot it fits in, behind earlier waiters that fit: while `connection` stays open (up to
   * GIT_EXCHANGE_TIMEOUT), or up to GIT_QUEUE_TIMEOUT without one.
   */
  private acquireSlot(client?: GitClient, connection?: AbortSignal): Promise<void> {
    if (this.draining) return Promise.reject(new GitBusyError('the server is shutting down'));
    if (connection?.aborted) return Promise.reject(new GitBusyError('the client went away'));
    if (this.slotsInUse < this.gitConfig.maxProcesses && this.shares.fits(client)) {
      this.take(client);
      return Promise.resolve();
    }
    if (client && this.waitingFrom(client) >= WAITING_PER_SHARE * this.shares.shareOf(client)) {
      return Promise.reject(new GitBusyError(this.shares.describeWait(client)));
    }
    // The slot freed by a stopped idle reader goes to the first waiter, as any released slot does.
    if (this.slotsInUse >= this.gitConfig.maxProcesses) for (const reclaim of this.reclaimers) if (reclaim()) break;
    return new Promise<void>((resolve, reject) => {
      const leave = (error: Error) => {
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        waiter.refuse(error);
      };
      const gone = () => leave(new GitBusyError('the client went away'));
      const waiter: Waiter = {
        client,
        grant: () => {
          clearTimeout(timer);
          connection?.removeEventListener('abort', gone);
          this.take(client);
          resolve();
        },
        refuse: (error: Error) => {
          clearTimeout(timer);
          connection?.removeEventListener('abort', gone);
          reject(error);
        },
      };
      const limitMs = connection ? (this.gitConfig.exchangeTimeoutMs ?? 3_600_000) : this.gitConfig.queueTimeoutMs;
      const timer = setTimeout(() => leave(new GitBusyError(this.shares.describeWait(client))), limitMs);
      connection?.addEventListener('abort', gone, { once: true });
      this.waiting.push(waiter);
    });
  }

  /** Requests of `client`'s address waiting for a slot now. */
  private waitingFrom(client: GitClient): number {
    const address = addressKey(client.address);
    let count = 0;
    for (const waiter of this.waiting) if (waiter.client && addressKey(waiter.client.address) === address) count += 1;
    return count;
  }

  private take(client: GitClient | undefined): void {
    this.slotsInUse += 1;
    this.shares.take(client);
  }

  private releaseSlot(client?: GitClient): void {
    this.slotsInUse -= 1;
    this.shares.give(client);
    // Every free slot goes to the earliest waiter within its share (a client over its share waits for its own).
    while (this.slotsInUse < this.gitConfig.maxProcesses) {
      const index = this.waiting.findIndex((waiter) => this.shares.fits(waiter.client));
      if (index < 0) return;
      const [next] = this.waiting.splice(index, 1);
      next.grant();
    }
  }
}

interface Waiter {
  client: GitClient | undefined;
  grant(): void;
  refuse(error: Error): void;
}

function requirePush(spec: ServeSpec): PushContext {
  if (!spec.push) throw new Error('receive-pack needs the pusher for its hooks');
  return spec.push;
}
