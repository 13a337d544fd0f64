import { ChildProcessWithoutNullStreams, spawn, SpawnOptionsWithStdioTuple, StdioPipe } from 'node:child_process';
import type { EventEmitter } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { budgetedGit, ProcessBudget } from './git-budget';
import type { GitLauncher } from './git-launcher';

/**
 * A running git with its three pipes, as its streaming callers see it: a ChildProcess spawned here, or a git the
 * launcher process started (LaunchedProcess). Events: `exit` and `close` (code, signal), `error`.
 */
export interface GitChildProcess extends EventEmitter {
  readonly pid?: number;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  kill(signal?: NodeJS.Signals | number): boolean;
}

/**
 * `spawn('git', …)` with its pipes. When the process has no descriptors left (EMFILE, ENFILE) Node starts nothing,
 * gives the child no pipes and reports the error only on the next tick: code that touched `child.stdout` threw,
 * and the error event then found no listener and ended the whole server. Here that case is an error thrown at
 * once, with the code the error answers (503) are chosen by; other failures to start (EAGAIN, ENOMEM, ENOENT) still
 * arrive as the child's `error` event, which every caller listens to.
 */
export function spawnGit(
  args: string[],
  options: Omit<SpawnOptionsWithStdioTuple<StdioPipe, StdioPipe, StdioPipe>, 'stdio'>,
  budget: ProcessBudget = {},
): ChildProcessWithoutNullStreams {
  // Under its memory and CPU budget (git-budget.ts): started through prlimit, which then becomes git.
  const command = budgetedGit(args, budget);
  let child: ChildProcessWithoutNullStreams;
  try {
    child = spawn(command.file, command.args, { ...options, stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (error) {
    command.cgroup?.release();
    throw error;
  }
  if (command.cgroup) {
    const lease = command.cgroup;
    // Before 'close', where callers decide what the exit means: the cgroup tells whether memory.max stopped git.
    const release = () => {
      if (lease.release().oomKilled) outOfMemory.add(child);
    };
    child.once('exit', release);
    child.once('error', release);
  }
  if (child.stdin === null || child.stdout === null || child.stderr === null) {
    child.on('error', () => undefined);
    throw Object.assign(new Error('git could not be started: too many open files'), { code: 'EMFILE' });
  }
  return child;
}

/**
 * Starts git through the launcher process, for the caller to stream: the long-lived and streaming gits of every
 * push and clone (receive-pack, upload-pack, cat-file sessions) then cost the server no fork of its whole heap,
 * which blocked its event loop for milliseconds each time. Resolves once git runs; rejects with the reason it
 * could not be started (EMFILE, EAGAIN, ENOENT in `code`).
 */
export async function startGit(
  launcher: GitLauncher,
  args: string[],
  options: { env: Record<string, string>; processGroup?: boolean },
  budget: ProcessBudget = {},
): Promise<GitChildProcess> {
  const command = budgetedGit(args, budget);
  let child: GitChildProcess;
  try {
    child = await launcher.start({ file: command.file, args: command.args, env: options.env, processGroup: options.processGroup === true });
  } catch (error) {
    command.cgroup?.release();
    throw error;
  }
  if (command.cgroup) {
    const lease = command.cgroup;
    child.once('exit', () => {
      if (lease.release().oomKilled) outOfMemory.add(child);
    });
  }
  return child;
}

const outOfMemory = new WeakSet<object>();

/** Whether the kernel stopped this git for going over its cgroup's memory.max. */
export function stoppedAtMemoryLimit(child: object): boolean {
  return outOfMemory.has(child);
}
