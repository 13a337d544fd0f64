import * as fs from 'node:fs';
import { CgroupDetection, CgroupLease, inCgroup, leaseCgroup } from './git-cgroups';

/**
 * What one git process may use: its address space and its CPU time. A repository's owner controls what git
 * works on (a tree of a few kilobytes can name 10^10 paths), so every git Anvil starts runs under limits the
 * kernel enforces: past them git fails (out of memory) or is killed (SIGXCPU), and the failure is an answer
 * rather than a host out of memory.
 */
export interface ProcessBudget {
  /** RLIMIT_AS in bytes; 0 or absent: none. */
  memoryBytes?: number;
  /** RLIMIT_CPU in seconds; 0 or absent: none. */
  cpuSeconds?: number;
}

/** The program and arguments that start `git args` under `budget`. */
export interface BudgetedCommand {
  file: string;
  args: string[];
  /** The cgroup git runs in, when the memory budget is one (git-cgroups.ts): released once git has exited. */
  cgroup?: CgroupLease;
}

/** The delegated cgroup v2 hierarchy in force (chosen once at start, GitLimits), or null for rlimits. */
let cgroups: { parent: string; cpu: boolean } | null = null;

/** Makes `detection` the way memory budgets are applied from now on; says which way that is. */
export function useCgroups(detection: CgroupDetection): string {
  cgroups = detection.parent === null ? null : { parent: detection.parent, cpu: detection.cpu };
  if (detection.parent !== null) return `cgroup v2 under ${detection.parent} (memory.max${detection.cpu ? ', cpu.max' : ''}) and RLIMIT_CPU`;
  return `${prlimit() ? 'prlimit' : 'ulimit'} (RLIMIT_AS, RLIMIT_CPU): ${detection.reason}`;
}

const PRLIMIT_PATHS = ['/usr/bin/prlimit', '/bin/prlimit'];
let prlimitPath: string | null | undefined;

/** util-linux's prlimit when installed (it sets the limits, then execs git: the pid stays git's). */
function prlimit(): string | null {
  if (prlimitPath === undefined) prlimitPath = PRLIMIT_PATHS.find((candidate) => fs.existsSync(candidate)) ?? null;
  return prlimitPath;
}

/**
 * `git <args>` with the budget applied: through prlimit, else through `sh` and its `ulimit` (POSIX sh has
 * both), else (no budget) git itself. Arguments stay an array: nothing reaches a shell as text but the fixed
 * script. Only the soft limits are set: git and its helpers never raise them, while Anvil's own hooks (a node
 * program, which reserves more address space than any budget for git) raise theirs back (push-hooks.ts).
 */
export function budgetedGit(args: string[], budget: ProcessBudget = {}): BudgetedCommand {
  const memory = budget.memoryBytes && budget.memoryBytes > 0 ? Math.floor(budget.memoryBytes) : 0;
  const cpu = budget.cpuSeconds && budget.cpuSeconds > 0 ? Math.ceil(budget.cpuSeconds) : 0;
  if (memory === 0 && cpu === 0) return { file: 'git', args };
  const gitArgs = [...memoryOptions(memory), ...args];
  const lease = cgroups && memory > 0 ? leaseCgroup(cgroups, memory) : null;
  if (lease) {
    // The memory limit is the cgroup's; the CPU time stays an rlimit (a cgroup limits a rate, not a total).
    const tool = prlimit();
    const inner = cpu === 0 ? { file: 'git', args: gitArgs } : tool ? { file: tool, args: [`--cpu=${cpu}:unlimited`, '--', 'git', ...gitArgs] } : null;
    const command = inner ?? { file: '/bin/sh', args: ['-c', `ulimit -S -t ${cpu} && exec git "$@"`, 'git', ...gitArgs] };
    return { ...inCgroup(lease, command.file, command.args), cgroup: lease };
  }
  const tool = prlimit();
  if (tool) {
    const limits = [...(memory > 0 ? [`--as=${memory}:unlimited`] : []), ...(cpu > 0 ? [`--cpu=${cpu}:unlimited`] : [])];
    return { file: tool, args: [...limits, '--', 'git', ...gitArgs] };
  }
  const script = [...(memory > 0 ? [`ulimit -S -v ${Math.floor(memory / 1024)}`] : []), ...(cpu > 0 ? [`ulimit -S -t ${cpu}`] : []), 'exec git "$@"'].join(
    ' && ',
  );
  return { file: '/bin/sh', args: ['-c', script, 'git', ...gitArgs] };
}

/**
 * Under an address-space limit git must map its packs in smaller windows than its 64-bit defaults (1 GiB
 * windows, 8 GiB in all), or a large repository fails to open where a small budget would have sufficed.
 */
function memoryOptions(memory: number): string[] {
  if (memory === 0) return [];
  const window = Math.max(16 * 1024 ** 2, Math.min(1024 ** 3, Math.floor(memory / 8)));
  const limit = Math.max(window * 2, Math.floor(memory / 4));
  return ['-c', `core.packedGitWindowSize=${window}`, '-c', `core.packedGitLimit=${limit}`];
}

/**
 * Whether a failed git ran out of its budget: it reported an allocation that failed, the kernel stopped it for
 * CPU time (SIGXCPU), or its cgroup's memory.events counted an out-of-memory kill (`oomKilled`).
 */
export function exhaustedBudget(stderr: string, signal: NodeJS.Signals | null, oomKilled = false): boolean {
  if (signal === 'SIGXCPU' || oomKilled) return true;
  return /out of memory|cannot allocate memory|mmap failed|unable to create thread/i.test(stderr);
}
