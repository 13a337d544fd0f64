import { ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { Socket } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';

/**
 * The launcher process (git-launcher.worker.js beside this file): a plain node script with a small heap that
 * spawns git on request. Spawning from the server process forks the whole server (its heap and page tables: tens
 * of milliseconds on a busy machine, all of it blocking the event loop); forking this small process instead costs
 * about a millisecond. It is the same argv-array spawn with the environment it is given, and it kills each git
 * (or its process group) when told to, or all of them when the server goes away.
 */
const LAUNCHER_FILE = path.join(__dirname, 'git-launcher.worker.js');

export interface LaunchRequest {
  /** The program (git, or the tool that starts it under its budget); git when absent. */
  file?: string;
  args: string[];
  env: Record<string, string>;
  input?: Buffer;
  processGroup: boolean;
  maxOutputBytes: number;
}

export interface LaunchResult {
  code: number | null;
  signal?: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
  /** Git wrote more than `maxOutputBytes` and was stopped: `stdout` is empty. */
  overflow?: boolean;
}

/** Names a size walk leaves out, with what is under them (plain data: it crosses to the launcher). */
export interface SkippedNames {
  suffixes: string[];
  prefixes: string[];
  /** Regular expression sources. */
  patterns: string[];
  /** Paths from the top of the walk, `/`-separated (`refs/pull`). */
  paths?: string[];
}

/** What the launcher answers. */
interface LauncherAnswer {
  id: number;
  code?: number | null;
  signal?: NodeJS.Signals | null;
  stdout?: string;
  stderr?: string;
  size?: number;
  error?: string;
  errorCode?: string;
  /** A started git's pipe, handed over with this message, and its pid. */
  pipe?: 'stdin' | 'stdout' | 'stderr';
  pid?: number;
  /** A started git ended (`code`, `signal`). */
  exited?: boolean;
  /** Git wrote more than it may and was stopped. */
  overflow?: boolean;
}

/**
 * A git the launcher started for this process to stream, as a ChildProcess is seen by its parent: the pipes are
 * this process's own ends (handed over by the launcher), `exit` comes from the launcher, which reaps it, and
 * `close` follows once its standard output and error closed too.
 */
export class LaunchedProcess extends EventEmitter {
  pid: number | undefined;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  killed = false;
  stdin: Socket;
  stdout: Socket;
  stderr: Socket;
  /** Resolves once the three pipes are here (git runs), rejects when git could not be started. */
  readonly started: Promise<this>;
  private settle!: { resolve(child: LaunchedProcess): void; reject(error: Error): void };
  private exited = false;
  private failed = false;
  private exitEmitted = false;
  private openOutputs = 2;

  constructor(private readonly processGroup: boolean) {
    super();
    this.started = new Promise<this>((resolve, reject) => {
      this.settle = { resolve: resolve as (child: LaunchedProcess) => void, reject };
    });
  }

  kill(signal: NodeJS.Signals | number = 'SIGTERM'): boolean {
    if (this.exited || this.pid === undefined) return false;
    try {
      process.kill(this.pid, signal);
      this.killed = true;
      return true;
    } catch {
      return false;
    }
  }

  /** The launcher handed over `pipe` (a bare handle): it becomes a socket as a spawned child's pipe does. */
  receivePipe(pipe: 'stdin' | 'stdout' | 'stderr', handle: unknown, pid: number): void {
    this.pid = pid;
    const socket = new Socket({ handle, readable: pipe !== 'stdin' } as ConstructorParameters<typeof Socket>[0]);
    // A pipe after one that did not arrive: nobody will stream this git.
    if (this.failed) return void socket.destroy();
    this[pipe] = socket;
    if (pipe !== 'stdin') socket.once('close', () => this.outputClosed());
    if (this.stdin && this.stdout && this.stderr) this.settle.resolve(this);
  }

  failToStart(error: Error): void {
    this.failed = true;
    for (const socket of [this.stdin, this.stdout, this.stderr]) socket?.destroy();
    this.settle.reject(error);
  }

  /**
   * Git ended; a null code and a signal when the launcher went away and git was stopped. `exit` is emitted on
   * a later turn of the event loop: a caller that awaited `started` has its listeners on by then.
   */
  exit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited) return;
    this.exited = true;
    this.exitCode = code;
    this.signalCode = signal;
    setImmediate(() => {
      this.stdin?.destroy();
      this.exitEmitted = true;
      this.emit('exit', code, signal);
      this.maybeClose();
    });
  }

  /** The launcher died: git (and its group) is stopped here, and counts as killed. */
  abandon(): void {
    if (this.pid === undefined) return this.settle.reject(new Error('the git launcher process exited'));
    try {
      process.kill(this.processGroup ? -this.pid : this.pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
    this.exit(null, 'SIGKILL');
  }

  private outputClosed(): void {
    this.openOutputs -= 1;
    this.maybeClose();
  }

  private maybeClose(): void {
    if (this.exitEmitted && this.openOutputs === 0) this.emit('close', this.exitCode, this.signalCode);
  }
}

/** How much lower background work's launcher runs than the server. */
const BACKGROUND_NICE = 10;

interface Pending {
  resolve(answer: LauncherAnswer): void;
  reject(error: Error): void;
}

/**
 * Runs git through the launcher process (started on first use, restarted if it dies). Used for the commands a
 * server runs in bulk in the background (mirror fetches) and the buffered commands of every push (commit-graph
 * refresh, new trees, the commit listing), so that they do not stall API requests.
 */
@Injectable()
export class GitLauncher implements OnApplicationShutdown {
  private readonly logger = new Logger('GitLauncher');
  private launcher: ChildProcess | null = null;
  private readonly pending = new Map<number, Pending>();
  /** Gits started for this process to stream, until they exit. */
  private readonly streamed = new Map<number, LaunchedProcess>();
  private nextId = 1;
  /** How much lower than the server's the launcher process (and every git it starts) runs: 0 for the server's. */
  private lowerBy = 0;
  private backgroundLauncher: GitLauncher | null = null;

  /**
   * The launcher of background work (git-client.ts#runInBackground): a second launcher process, started on
   * first use, whose priority (and so every git it starts) is BACKGROUND_NICE below the server's. Its spawns never
   * queue ahead of a request's in the first launcher, and its gits take the processor only where requests
   * leave it idle: on a busy machine about a tenth of what a request's git gets (CFS weights 110 against 1024).
   */
  get background(): GitLauncher {
    if (this.lowerBy > 0) return this;
    if (!this.backgroundLauncher) {
      this.backgroundLauncher = new GitLauncher();
      this.backgroundLauncher.lowerBy = BACKGROUND_NICE;
    }
    return this.backgroundLauncher;
  }

  /** Starts git; `kill()` of the answer stops it. */
  launch(request: LaunchRequest): { result: Promise<LaunchResult>; kill(): void } {
    const { id, answer } = this.ask({
      file: request.file,
      args: request.args,
      env: request.env,
      input: request.input && request.input.length > 0 ? request.input.toString('base64') : undefined,
      group: request.processGroup,
      maxOutput: request.maxOutputBytes,
    });
    const result = answer.then((message) => ({
      code: message.code ?? null,
      signal: message.signal ?? null,
      stdout: Buffer.from(message.stdout ?? '', 'base64'),
      stderr: message.stderr ?? '',
      overflow: message.overflow === true,
    }));
    return { result, kill: () => this.launcher?.connected && this.launcher.send({ type: 'kill', id }) };
  }

  /**
   * Total bytes of the regular files under `dir`, `skip` and what is under it left out; a missing directory,
   * or an entry that vanishes meanwhile, counts 0. The walk's thousands of lookups run in the launcher.
   */
  async size(dir: string, skip: SkippedNames): Promise<number> {
    const message = await this.ask({ type: 'size', dir, skip }).answer;
    return message.size ?? 0;
  }

  /**
   * Starts git for the caller to stream, as `spawn` with three pipes would, without forking this process:
   * resolves once it runs, rejects (with the launcher's `code`) when it could not be started.
   */
  start(request: Omit<LaunchRequest, 'input' | 'maxOutputBytes'>): Promise<LaunchedProcess> {
    const launcher = this.ensureLauncher();
    const id = this.nextId++;
    const child = new LaunchedProcess(request.processGroup);
    this.streamed.set(id, child);
    this.hold(launcher);
    launcher.send({ type: 'start', id, file: request.file, args: request.args, env: request.env, group: request.processGroup });
    return child.started;
  }

  /** Sends one request; its answer, or its error as an Error with the launcher's `code`. */
  private ask(request: Record<string, unknown>): { id: number; answer: Promise<LauncherAnswer> } {
    const launcher = this.ensureLauncher();
    const id = this.nextId++;
    const answer = new Promise<LauncherAnswer>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
    });
    this.hold(launcher);
    launcher.send({ id, ...request });
    return { id, answer };
  }

  /** The channel keeps this process alive only while an answer or a started git is awaited. */
  private hold(launcher: ChildProcess): void {
    if (this.pending.size + this.streamed.size === 1) channelOf(launcher)?.ref?.();
  }

  private letGo(launcher: ChildProcess): void {
    if (this.pending.size + this.streamed.size === 0) channelOf(launcher)?.unref?.();
  }

  private onStreamed(launcher: ChildProcess, child: LaunchedProcess, message: LauncherAnswer, handle: unknown): void {
    if (message.pipe && handle) return child.receivePipe(message.pipe, handle, message.pid ?? 0);
    // A pipe that did not arrive (this process out of descriptors): git is stopped, and was never started here.
    if (message.pipe) {
      child.pid = message.pid;
      child.abandon();
      return child.failToStart(Object.assign(new Error('git could not be started: its pipes did not reach the server'), { code: 'EMFILE' }));
    }
    this.streamed.delete(message.id);
    this.letGo(launcher);
    if (message.error !== undefined) return child.failToStart(Object.assign(new Error(message.error), message.errorCode ? { code: message.errorCode } : {}));
    if (message.exited) child.exit(message.code ?? null, message.signal ?? null);
  }

  /**
   * After every `beforeApplicationShutdown` (the mirror runner drains there, through this launcher): closing the
   * channel makes the launcher kill whatever still runs and exit.
   */
  onApplicationShutdown(): void {
    if (this.launcher?.connected) this.launcher.disconnect();
    this.launcher = null;
    this.backgroundLauncher?.onApplicationShutdown();
  }

  private ensureLauncher(): ChildProcess {
    if (this.launcher?.connected) return this.launcher;
    const launcher = spawn(process.execPath, ['--max-old-space-size=64', LAUNCHER_FILE], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    launcher.on('message', (message: LauncherAnswer, handle: unknown) => {
      const child = this.streamed.get(message.id);
      if (child) return this.onStreamed(launcher, child, message, handle);
      const entry = this.pending.get(message.id);
      if (!entry) return;
      this.pending.delete(message.id);
      this.letGo(launcher);
      if (message.error !== undefined) return entry.reject(Object.assign(new Error(message.error), message.errorCode ? { code: message.errorCode } : {}));
      entry.resolve(message);
    });
    launcher.on('exit', () => {
      if (this.launcher === launcher) this.launcher = null;
      for (const [id, entry] of this.pending) {
        this.pending.delete(id);
        entry.reject(new Error('the git launcher process exited'));
      }
      for (const [id, child] of this.streamed) {
        this.streamed.delete(id);
        child.abandon();
      }
    });
    launcher.on('error', (error) => this.logger.error(`git launcher: ${error.message}`));
    // Lowered before it is asked to start anything: the gits it starts inherit its priority.
    if (this.lowerBy > 0 && launcher.pid !== undefined) lowerPriority(launcher.pid, this.lowerBy);
    // It must not keep the server alive on its own.
    launcher.unref();
    channelOf(launcher)?.unref?.();
    this.launcher = launcher;
    return launcher;
  }
}

/** Where the system allows it: an unprivileged process may lower its children's priority, never raise it. */
function lowerPriority(pid: number, by: number): void {
  try {
    os.setPriority(pid, Math.min(19, os.getPriority(pid) + by));
  } catch {
    // Not on this platform, or the launcher is gone already: it then runs at the server's priority.
  }
}

function channelOf(child: ChildProcess): { ref?: () => void; unref?: () => void } | undefined {
  return child.channel as { ref?: () => void; unref?: () => void } | undefined;
}
