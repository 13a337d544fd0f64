import { ChildProcess, spawn } from 'node:child_process';
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
}

interface Pending {
  resolve(result: LaunchResult): void;
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
  private nextId = 1;

  /** Starts git; `kill()` of the answer stops it. */
  launch(request: LaunchRequest): { result: Promise<LaunchResult>; kill(): void } {
    const launcher = this.ensureLauncher();
    const id = this.nextId++;
    const result = new Promise<LaunchResult>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
    });
    // The channel keeps the process alive only while an answer is awaited.
    if (this.pending.size === 1) channelOf(launcher)?.ref?.();
    launcher.send({
      id,
      file: request.file,
      args: request.args,
      env: request.env,
      input: request.input && request.input.length > 0 ? request.input.toString('base64') : undefined,
      group: request.processGroup,
      maxOutput: request.maxOutputBytes,
    });
    return { result, kill: () => this.launcher?.connected && this.launcher.send({ type: 'kill', id }) };
  }

  /**
   * After every `beforeApplicationShutdown` (the mirror runner drains there, through this launcher): closing the
   * channel makes the launcher kill whatever still runs and exit.
   */
  onApplicationShutdown(): void {
    if (this.launcher?.connected) this.launcher.disconnect();
    this.launcher = null;
  }

  private ensureLauncher(): ChildProcess {
    if (this.launcher?.connected) return this.launcher;
    const launcher = spawn(process.execPath, ['--max-old-space-size=64', LAUNCHER_FILE], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    launcher.on('message', (message: { id: number; code?: number | null; signal?: NodeJS.Signals | null; stdout?: string; stderr?: string; error?: string; errorCode?: string }) => {
      const entry = this.pending.get(message.id);
      if (!entry) return;
      this.pending.delete(message.id);
      if (this.pending.size === 0) channelOf(launcher)?.unref?.();
      if (message.error !== undefined) return entry.reject(Object.assign(new Error(message.error), message.errorCode ? { code: message.errorCode } : {}));
      entry.resolve({ code: message.code ?? null, signal: message.signal ?? null, stdout: Buffer.from(message.stdout ?? '', 'base64'), stderr: message.stderr ?? '' });
    });
    launcher.on('exit', () => {
      if (this.launcher === launcher) this.launcher = null;
      for (const [id, entry] of this.pending) {
        this.pending.delete(id);
        entry.reject(new Error('the git launcher process exited'));
      }
    });
    launcher.on('error', (error) => this.logger.error(`git launcher: ${error.message}`));
    // It must not keep the server alive on its own.
    launcher.unref();
    channelOf(launcher)?.unref?.();
    this.launcher = launcher;
    return launcher;
  }
}

function channelOf(child: ChildProcess): { ref?: () => void; unref?: () => void } | undefined {
  return child.channel as { ref?: () => void; unref?: () => void } | undefined;
}
