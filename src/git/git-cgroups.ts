import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Memory and CPU limits for each git process through a cgroup v2 hierarchy delegated to the server: every git
 * gets a child cgroup of its own with `memory.max` (what it may hold in memory, page cache included, unlike an
 * address-space limit, which also counts what git only maps) and `cpu.max` (the share of a CPU it may use),
 * removed once git has exited. Where no such hierarchy is writable (cgroup v1, a container without delegation)
 * the budgets fall back to rlimits (git-budget.ts); the CPU-time limit is an rlimit in both cases, as cgroups
 * limit a rate, not a total.
 */

/** Where the cgroup files are read; the real ones unless a test points elsewhere. */
export interface CgroupSources {
  /** Contents of /proc/self/mountinfo. */
  mountinfo: string;
  /** Contents of /proc/self/cgroup. */
  selfCgroup: string;
  /** The server's pid (moved out of the delegated cgroup when it must be, see `enableControllers`). */
  pid: number;
}

/** A hierarchy git processes can be given cgroups in, or why there is none. */
export type CgroupDetection = { parent: string; cpu: boolean } | { parent: null; reason: string };

/** GIT_CGROUP: `auto` (the server's own cgroup when delegated), `off`, or the path of a delegated cgroup. */
export type CgroupSetting = 'auto' | 'off' | string;

/** The CPU share of one git under cpu.max: one CPU's worth per period. */
const CPU_PERIOD_US = 100_000;

export function realCgroupSources(): CgroupSources {
  const read = (file: string) => {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch {
      return '';
    }
  };
  return { mountinfo: read('/proc/self/mountinfo'), selfCgroup: read('/proc/self/cgroup'), pid: process.pid };
}

/** The mount point of the cgroup2 filesystem, from mountinfo (`… <mount point> … - cgroup2 …`). */
export function cgroup2Mount(mountinfo: string): string | null {
  for (const line of mountinfo.split('\n')) {
    const [before, after] = line.split(' - ');
    if (!after || after.split(' ')[0] !== 'cgroup2') continue;
    const mountPoint = before.split(' ')[4];
    if (mountPoint) return mountPoint.replace(/\\040/g, ' ');
  }
  return null;
}

/** The process's cgroup in the unified hierarchy (`0::<path>`), or null under cgroup v1 only. */
export function unifiedPath(selfCgroup: string): string | null {
  for (const line of selfCgroup.split('\n')) if (line.startsWith('0::')) return line.slice(3).trim() || '/';
  return null;
}

/**
 * Finds the delegated hierarchy and readies it: the controllers `memory` (required) and `cpu` (when offered)
 * enabled for its children. Never throws: what is not possible is the reason in the answer.
 */
export function detectCgroup(setting: CgroupSetting, sources: CgroupSources): CgroupDetection {
  if (setting === 'off') return { parent: null, reason: 'GIT_CGROUP is off' };
  let parent: string;
  if (setting === 'auto') {
    const mount = cgroup2Mount(sources.mountinfo);
    if (!mount) return { parent: null, reason: 'no cgroup v2 filesystem is mounted' };
    const own = unifiedPath(sources.selfCgroup);
    if (own === null) return { parent: null, reason: 'the server is in no cgroup v2 hierarchy' };
    parent = path.join(mount, own);
  } else {
    parent = path.resolve(setting);
  }
  const controllers = words(readFile(path.join(parent, 'cgroup.controllers')));
  if (controllers === null) return { parent: null, reason: `${parent} is not a cgroup v2 directory` };
  if (!controllers.has('memory')) return { parent: null, reason: `the memory controller is not delegated to ${parent}` };
  try {
    fs.accessSync(parent, fs.constants.W_OK);
  } catch {
    return { parent: null, reason: `${parent} is not writable (not delegated to this user)` };
  }
  const wanted = controllers.has('cpu') ? ['memory', 'cpu'] : ['memory'];
  const problem = enableControllers(parent, wanted, sources.pid);
  if (problem) return { parent: null, reason: problem };
  return { parent, cpu: wanted.includes('cpu') };
}

/**
 * Enables `wanted` for the children of `parent`. A cgroup with processes of its own cannot enable controllers
 * for children, so when the server itself is in `parent` it first moves into a leaf `parent/anvil-server`.
 */
function enableControllers(parent: string, wanted: string[], pid: number): string | null {
  const control = path.join(parent, 'cgroup.subtree_control');
  const enabled = words(readFile(control));
  if (enabled === null) return `${control} cannot be read`;
  const missing = wanted.filter((name) => !enabled.has(name));
  if (missing.length === 0) return null;
  try {
    const members = (readFile(path.join(parent, 'cgroup.procs')) ?? '').split('\n').filter((line) => line.trim() !== '');
    if (members.includes(String(pid))) {
      const leaf = path.join(parent, 'anvil-server');
      fs.mkdirSync(leaf, { recursive: true });
      fs.writeFileSync(path.join(leaf, 'cgroup.procs'), `${pid}\n`);
    }
    fs.writeFileSync(control, missing.map((name) => `+${name}`).join(' '));
  } catch (error) {
    return `the controllers ${missing.join(', ')} cannot be enabled in ${parent}: ${(error as Error).message}`;
  }
  const after = words(readFile(control)) ?? new Set<string>();
  const still = wanted.filter((name) => !after.has(name));
  return still.length === 0 ? null : `the controllers ${still.join(', ')} stay disabled in ${parent}`;
}

/** One git's cgroup: created before git starts, removed after it exited. */
export interface CgroupLease {
  /** The file git's pid is written to (by the shell that then becomes git). */
  procs: string;
  /** Removes the cgroup; says whether the kernel stopped git for exceeding memory.max. */
  release(): { oomKilled: boolean };
}

let sequence = 0;

/** A child cgroup of `parent` with the given limits; null (rlimits apply) when it cannot be made. */
export function leaseCgroup(detection: { parent: string; cpu: boolean }, memoryBytes: number): CgroupLease | null {
  const dir = path.join(detection.parent, `git-${process.pid}-${++sequence}`);
  try {
    fs.mkdirSync(dir);
    if (memoryBytes > 0) {
      fs.writeFileSync(path.join(dir, 'memory.max'), `${Math.floor(memoryBytes)}\n`);
      // No swapping past the limit either, where swap is accounted.
      tryWrite(path.join(dir, 'memory.swap.max'), '0\n');
    }
    if (detection.cpu) fs.writeFileSync(path.join(dir, 'cpu.max'), `${CPU_PERIOD_US} ${CPU_PERIOD_US}\n`);
  } catch {
    removeCgroup(dir);
    return null;
  }
  let released: { oomKilled: boolean } | null = null;
  return {
    procs: path.join(dir, 'cgroup.procs'),
    release: () => {
      if (released) return released;
      const events = readFile(path.join(dir, 'memory.events')) ?? '';
      const oomKills = /^oom_kill (\d+)$/m.exec(events);
      released = { oomKilled: oomKills !== null && Number(oomKills[1]) > 0 };
      removeCgroup(dir);
      return released;
    },
  };
}

/**
 * `program args` started inside the cgroup: a fixed shell script writes its own pid to `cgroup.procs`, then
 * becomes the program (the pid stays the one the server knows). Nothing reaches the shell as text but the script.
 */
export function inCgroup(lease: CgroupLease, file: string, args: string[]): { file: string; args: string[] } {
  return { file: '/bin/sh', args: ['-c', 'echo $$ > "$1" && shift && exec "$@"', 'git', lease.procs, file, ...args] };
}

/** rmdir of a cgroup (its control files go with it); a plain directory (a test's) is removed with its files. */
function removeCgroup(dir: string): void {
  try {
    fs.rmdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOTEMPTY') return;
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // A real cgroup still busy: the kernel keeps it until its last process is gone; nothing else to do.
    }
  }
}

function tryWrite(file: string, text: string): void {
  try {
    fs.writeFileSync(file, text);
  } catch {
    // Not every kernel offers it.
  }
}

function readFile(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** The words of a controller list; the `+` of a written `+memory` counts as the name. */
function words(text: string | null): Set<string> | null {
  if (text === null) return null;
  return new Set(
    text
      .split(/\s+/)
      .filter((word) => word !== '')
      .map((word) => word.replace(/^\+/, '')),
  );
}
