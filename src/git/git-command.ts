import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import { PassThrough, pipeline, type Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { GitConfig, StorageConfig } from '../config/slices';
import { BudgetedCommand, budgetedGit, exhaustedBudget, ProcessBudget } from './git-budget';
import { currentGitClient, inBackground } from './git-client';
import { gitEnvironment, gitHome } from './git-environment';
import { GitLauncher, LaunchResult } from './git-launcher';
import { GitChildProcess, spawnGit, startGit, stoppedAtMemoryLimit } from './spawn-git';

// One cohesive thing, kept whole though long: the one way git is run (environment, limits, output, streams).

/** A git command that failed: it exited non-zero, was killed, or could not start. */
export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
    message?: string,
  ) {
    super(message ?? `git ${args[0] ?? ''} failed (exit ${exitCode}): ${stderr.trim().split('\n')[0] ?? ''}`);
    this.name = 'GitError';
  }
}

/** The command ran longer than its time limit and was killed. */
export class GitTimeoutError extends GitError {
  constructor(args: readonly string[], timeoutMs: number) {
    super(args, null, '', `git ${args[0] ?? ''} timed out after ${timeoutMs} ms`);
    this.name = 'GitTimeoutError';
  }
}

/** The command was stopped through its AbortSignal. */
export class GitAbortedError extends GitError {
  constructor(args: readonly string[]) {
    super(args, null, '', `git ${args[0] ?? ''} was stopped`);
    this.name = 'GitAbortedError';
  }
}

/**
 * The command ran out of its memory or CPU budget (git-budget.ts): what it was asked to walk is too large to
 * answer (a tree that expands to billions of paths), not a fault of the server.
 */
export class GitBudgetError extends GitError {
  constructor(args: readonly string[], stderr: string) {
    super(args, null, stderr, `git ${args[0] ?? ''} ran out of its memory or CPU budget`);
    this.name = 'GitBudgetError';
  }
}

/**
 * The command wrote more than a buffered answer may hold (MAX_OUTPUT_BYTES) and was stopped: its output is never
 * handed on cut short. Like a budget it says that what was asked is too large to answer, not that the server failed.
 */
export class GitOutputTooLargeError extends GitBudgetError {
  constructor(args: readonly string[], limitBytes: number) {
    super(args, '');
    this.message = `git ${args[0] ?? ''} wrote more than ${limitBytes / 1024 / 1024} MiB, more than one answer may hold`;
    this.name = 'GitOutputTooLargeError';
  }
}

/** The git executable could not be started (not installed, or not on the fixed PATH). */
export class GitUnavailableError extends GitError {
  constructor(args: readonly string[], cause: Error) {
    super(args, null, '', `git could not be started: ${cause.message}`);
    this.name = 'GitUnavailableError';
    // Its code (EAGAIN, ENOMEM) chooses the answer: 503, the server being out of resources.
    this.cause = cause;
  }
}

export interface GitRunOptions {
  /** Runs against this repository (`--git-dir`). */
  gitDir?: string;
  /** Written to the command's standard input. */
  input?: string | Buffer;
  /** Extra variables for this command only (e.g. the author of a commit). */
  env?: Record<string, string>;
  timeoutMs?: number;
  /**
   * Network commands (clone, fetch) start helpers (git-remote-http, index-pack): run git in a process group
   * of its own and stop the whole group on timeout or abort, so that no helper outlives the command.
   */
  processGroup?: boolean;
  /**
   * Stops the command early (shutdown); it then fails with GitAbortedError. Without one, the signal of the
   * client the work is for (git-client.ts) stops it when that client goes away.
   */
  signal?: AbortSignal;
  /**
   * Spawn through the small launcher process instead of forking the server (git-launcher.ts): for commands run
   * in bulk in the background, so that they do not stall API requests.
   */
  offload?: boolean;
}

export interface GitResult {
  stdout: string;
  exitCode: number;
  /** What git printed on standard error (its first 64 KiB). */
  stderr: string;
}

/** A git command whose standard output is read as it comes (blobs, archives), never buffered whole. */
export interface GitStream {
  stdout: Readable;
  /** Settles when git has exited: rejects with a GitError on a non-zero exit, a timeout or a kill. */
  exited: Promise<void>;
  /** Stops git (the reader went away). */
  kill(): void;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

/**
 * The only code that spawns git (house style: one adapter per side effect). Arguments always go as an array,
 * never through a shell; every command has a time limit, a clean environment (HOME under DATA_DIR, no system
 * or global configuration) and fails with a typed GitError.
 */
@Injectable()
export class GitCommand {
  private homeReady = false;

  constructor(
    private readonly storageConfig: StorageConfig,
    private readonly gitConfig: GitConfig,
    private readonly launcher: GitLauncher,
  ) {}

  /** Runs git and returns its standard output; a non-zero exit is a GitError. */
  async run(args: string[], options: GitRunOptions = {}): Promise<string> {
    const result = await this.execute(args, options);
    return result.stdout;
  }

  /** Runs git and returns its standard output as bytes (blob contents). */
  async runBuffer(args: string[], options: GitRunOptions = {}): Promise<Buffer> {
    const result = await this.execute(args, options);
    return result.bytes;
  }

  /**
   * Starts git and hands back its standard output as a stream. The time limit still holds: a command that runs
   * longer is killed and `exited` rejects.
   */
  stream(args: string[], options: GitRunOptions = {}): GitStream {
    this.ensureHome();
    const fullArgs = options.gitDir ? [`--git-dir=${options.gitDir}`, ...args] : args;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const child = spawnGit(fullArgs, { env: gitEnvironment(this.storageConfig.dataDir, options.env), shell: false }, this.budget(options, timeoutMs));
    const stderr: Buffer[] = [];
    let timedOut = false;
    let killed = false;
    let aborted = false;
    const signal = options.signal ?? currentGitClient()?.signal;
    const onAbort = () => {
      aborted = true;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 64) stderr.push(chunk);
    });
    const exited = new Promise<void>((resolve, reject) => {
      child.on('error', (error) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        reject(new GitUnavailableError(args, error));
      });
      child.on('close', (code, exitSignal) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (timedOut) return reject(new GitTimeoutError(args, timeoutMs));
        if (killed) return resolve();
        if (aborted) return reject(new GitAbortedError(args));
        if (code === 0) return resolve();
        const text = Buffer.concat(stderr).toString('utf8');
        reject(exhaustedBudget(text, exitSignal, stoppedAtMemoryLimit(child)) ? new GitBudgetError(args, text) : new GitError(args, code, text));
      });
    });
    // Callers that only await the stream must not see an unhandled rejection.
    exited.catch(() => undefined);
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
    // Node resumes a child's unread output when the child exits, so that a pipe nobody reads cannot keep it alive:
    // what a quick git wrote before its caller started reading (after an await) was thrown away, and a walk read
    // as nothing. The output goes through a stream of ours that takes it from the start, with the same back-pressure.
    const stdout = new PassThrough();
    pipeline(child.stdout, stdout, () => undefined);
    return {
      stdout,
      exited,
      kill: () => {
        killed = true;
        child.kill('SIGKILL');
        // Output nobody will read must not keep the process from closing (a paused pipe never ends).
        stdout.destroy();
        child.stdout.destroy();
      },
    };
  }

  /**
   * Starts a long-lived git that answers requests on its standard input (`cat-file --batch-command`), with the
   * same clean environment; its owner (git-object-readers.ts) bounds each request in time and stops it.
   */
  async startSession(args: string[], options: Pick<GitRunOptions, 'gitDir' | 'env'> = {}): Promise<GitChildProcess> {
    this.ensureHome();
    const fullArgs = options.gitDir ? [`--git-dir=${options.gitDir}`, ...args] : args;
    try {
      return await startGit(
        this.launcher,
        fullArgs,
        { env: gitEnvironment(this.storageConfig.dataDir, options.env) },
        { memoryBytes: this.gitConfig?.commandMaxMemoryBytes },
      );
    } catch (error) {
      throw new GitUnavailableError(args, error as Error);
    }
  }

  /** Runs git and returns the exit code as well, for commands whose exit code is an answer (show-ref). */
  async probe(args: string[], options: GitRunOptions = {}): Promise<GitResult> {
    return this.execute(args, options, true);
  }

  private async execute(args: string[], options: GitRunOptions, acceptAnyExit = false): Promise<GitResult & { bytes: Buffer }> {
    this.ensureHome();
    const fullArgs = options.gitDir ? [`--git-dir=${options.gitDir}`, ...args] : args;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const env = gitEnvironment(this.storageConfig.dataDir, options.env);
    const signal = options.signal ?? currentGitClient()?.signal;
    // Background work's git goes through the launcher of background work, which runs at a lower priority.
    const background = inBackground();
    if (options.offload || background)
      return this.executeOffloaded(
        args,
        budgetedGit(fullArgs, this.budget(options, timeoutMs)),
        env,
        { ...options, signal },
        timeoutMs,
        acceptAnyExit,
        background ? this.launcher.background : this.launcher,
      );
    return new Promise<GitResult & { bytes: Buffer }>((resolve, reject) => {
      const child = spawnGit(fullArgs, { env, shell: false, detached: options.processGroup === true }, this.budget(options, timeoutMs));
      const stdout: Buffer[] = [];
      const stderr: Buffer[] = [];
      let outputBytes = 0;
      let timedOut = false;
      let aborted = false;
      let settled = false;
      const stop = () => {
        if (options.processGroup && child.pid !== undefined) {
          try {
            process.kill(-child.pid, 'SIGKILL');
            return;
          } catch {
            // The group is gone already; fall back to the child itself.
          }
        }
        child.kill('SIGKILL');
      };
      const onAbort = () => {
        aborted = true;
        stop();
      };
      const finish = (action: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        action();
      };
      const timer = setTimeout(() => {
        timedOut = true;
        stop();
      }, timeoutMs);
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
      let overflow = false;
      child.stdout.on('data', (chunk: Buffer) => {
        outputBytes += chunk.length;
        if (outputBytes <= MAX_OUTPUT_BYTES) return void stdout.push(chunk);
        // More than one answer may hold: stopped, and failed below rather than handed on cut short.
        if (!overflow) stop();
        overflow = true;
      });
      child.stderr.on('data', (chunk: Buffer) => {
        if (Buffer.concat(stderr).length < 64 * 1024) stderr.push(chunk);
      });
      child.on('error', (error) => finish(() => reject(new GitUnavailableError(args, error))));
      child.on('close', (code, exitSignal) => {
        finish(() => {
          if (overflow) return reject(new GitOutputTooLargeError(args, MAX_OUTPUT_BYTES));
          if (timedOut) return reject(new GitTimeoutError(args, timeoutMs));
          if (aborted) return reject(new GitAbortedError(args));
          const bytes = Buffer.concat(stdout);
          const text = Buffer.concat(stderr).toString('utf8');
          const result = { stdout: bytes.toString('utf8'), bytes, exitCode: code ?? -1, stderr: text };
          if (exhaustedBudget(text, exitSignal, stoppedAtMemoryLimit(child))) return reject(new GitBudgetError(args, text));
          if (code === 0 || (acceptAnyExit && code !== null)) return resolve(result);
          reject(new GitError(args, code, text));
        });
      });
      // A command that exits before reading its input closes the pipe: that is not an error of ours.
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.input ?? '');
    });
  }

  /** The same contract as the local spawn, through GitLauncher. */
  private async executeOffloaded(
    args: string[],
    command: BudgetedCommand,
    env: Record<string, string>,
    options: GitRunOptions,
    timeoutMs: number,
    acceptAnyExit: boolean,
    launcher: GitLauncher,
  ): Promise<GitResult & { bytes: Buffer }> {
    const input = options.input === undefined ? undefined : Buffer.isBuffer(options.input) ? options.input : Buffer.from(options.input, 'utf8');
    let launched: ReturnType<GitLauncher['launch']>;
    try {
      launched = launcher.launch({
        file: command.file,
        args: command.args,
        env,
        input,
        processGroup: options.processGroup === true,
        maxOutputBytes: MAX_OUTPUT_BYTES,
      });
    } catch (error) {
      command.cgroup?.release();
      throw new GitUnavailableError(args, error as Error);
    }
    let timedOut = false;
    let aborted = false;
    const timer = setTimeout(() => {
      timedOut = true;
      launched.kill();
    }, timeoutMs);
    const onAbort = () => {
      aborted = true;
      launched.kill();
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    let outcome: LaunchResult;
    let oomKilled = false;
    try {
      outcome = await launched.result;
    } catch (error) {
      throw new GitUnavailableError(args, error as Error);
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      oomKilled = command.cgroup?.release().oomKilled ?? false;
    }
    if (timedOut) throw new GitTimeoutError(args, timeoutMs);
    if (aborted) throw new GitAbortedError(args);
    if (outcome.overflow) throw new GitOutputTooLargeError(args, MAX_OUTPUT_BYTES);
    if (exhaustedBudget(outcome.stderr, outcome.signal ?? null, oomKilled)) throw new GitBudgetError(args, outcome.stderr);
    const result = { stdout: outcome.stdout.toString('utf8'), bytes: outcome.stdout, exitCode: outcome.code ?? -1, stderr: outcome.stderr };
    if (outcome.code === 0 || (acceptAnyExit && outcome.code !== null)) return result;
    throw new GitError(args, outcome.code, outcome.stderr);
  }

  /**
   * Network commands (clone, fetch: processGroup) get the budget of serving processes; the content API's
   * commands the smaller command budget, with CPU time up to their time limit.
   */
  private budget(options: GitRunOptions, timeoutMs: number): ProcessBudget {
    const git = this.gitConfig;
    if (!git) return {};
    if (options.processGroup) return { memoryBytes: git.maxMemoryBytes, cpuSeconds: git.maxCpuSeconds };
    return { memoryBytes: git.commandMaxMemoryBytes, cpuSeconds: Math.ceil(timeoutMs / 1000) + 1 };
  }

  private ensureHome(): void {
    if (this.homeReady) return;
    fs.mkdirSync(gitHome(this.storageConfig.dataDir), { recursive: true });
    this.homeReady = true;
  }
}
