import * as fs from 'node:fs';
import type { AppConfig } from '../config/config';

/**
 * Descriptors the process holds whatever it serves: standard streams, the event loop, worker threads, the log,
 * the SQLite files, the listeners (HTTP, SSH, push hooks), the git launcher's channel.
 */
const BASE_DESCRIPTORS = 40;
/** A serving git process costs its three pipes and the client's connection. */
const DESCRIPTORS_PER_GIT_PROCESS = 4;
const MYSQL_POOL_CONNECTIONS = 10;
const SQLITE_DESCRIPTORS = 3;

/** The soft RLIMIT_NOFILE from /proc/self/limits (Linux); undefined where it cannot be read or is unlimited. */
export function openFilesLimit(limitsFile = '/proc/self/limits'): number | undefined {
  try {
    const line = fs
      .readFileSync(limitsFile, 'utf8')
      .split('\n')
      .find((candidate) => candidate.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    return soft === undefined || !/^\d+$/.test(soft) ? undefined : Number(soft);
  } catch {
    return undefined;
  }
}

/**
 * Fits GIT_MAX_PROCESSES and HTTP_MAX_CONNECTIONS to the descriptors the process may open (`ulimit -n`): past the
 * limit, an accept fails and the kernel's queue of connections is reset without an answer, and git cannot start.
 * Lowers the settings in `config` when they do not fit (half of what is left for git, the rest for connections)
 * and returns the warnings to log; nothing when they fit or the limit is unknown.
 */
export function fitToDescriptorLimit(config: Pick<AppConfig, 'database' | 'git' | 'http'>, limit = openFilesLimit()): string[] {
  if (limit === undefined) return [];
  const database = config.database.type === 'mysql' ? MYSQL_POOL_CONNECTIONS : SQLITE_DESCRIPTORS;
  const available = Math.max(0, limit - BASE_DESCRIPTORS - database);
  const wanted = config.git.maxProcesses * DESCRIPTORS_PER_GIT_PROCESS + (config.http.maxConnections === 0 ? Infinity : config.http.maxConnections);
  if (wanted <= available) return [];
  const gitProcesses = Math.max(1, Math.min(config.git.maxProcesses, Math.floor(available / 2 / DESCRIPTORS_PER_GIT_PROCESS)));
  const connections = Math.max(4, available - gitProcesses * DESCRIPTORS_PER_GIT_PROCESS);
  const warnings = [`the process may open only ${limit} files (ulimit -n); raise it for more concurrent clients`];
  if (gitProcesses < config.git.maxProcesses) {
    warnings.push(`GIT_MAX_PROCESSES lowered from ${config.git.maxProcesses} to ${gitProcesses} to fit`);
    config.git.maxProcesses = gitProcesses;
  }
  if (config.http.maxConnections === 0 || connections < config.http.maxConnections) {
    warnings.push(`HTTP_MAX_CONNECTIONS lowered from ${config.http.maxConnections === 0 ? 'unlimited' : config.http.maxConnections} to ${connections} to fit`);
    config.http.maxConnections = connections;
  }
  return warnings;
}
