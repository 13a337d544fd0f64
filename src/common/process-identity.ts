import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { procStatFields } from './proc-stat';

/**
 * Names this process among all that may hold a lease in the shared database, so that a process on the same
 * machine can tell that the holder died (kill -9, a crash) instead of waiting for its lease to lapse:
 * `<machine>-<pid>-<start>-<random>`. `machine` hashes the kernel's boot id with the PID namespace, so two
 * containers on one host, or one machine before and after a reboot, differ; `start` is the process's start time
 * in clock ticks, so a pid used again by another process does not pass for the old one. Where /proc cannot tell
 * (not Linux), the token is `x-<random>` and its holder is never judged dead: its leases lapse as before.
 */
export function processToken(): string {
  const random = randomBytes(8).toString('hex');
  const machine = machineKey();
  const start = startTicks(process.pid);
  return machine && start ? `${machine}-${process.pid}-${start}-${random}` : `x-${random}`;
}

let ownTag: string | undefined;

/**
 * This process's token, the same for its whole life: it begins the names of what the process builds on disk
 * before making it visible (`<token>~<rest>`), so that what a dead process left is known as such.
 */
export function ownProcessTag(): string {
  ownTag ??= processToken();
  return ownTag;
}

/** `rest` tagged with this process (see ownProcessTag). */
export function taggedName(rest: string): string {
  return `${ownProcessTag()}~${rest}`;
}

/** Tokens of processes whose liveness lease lapsed (src/integrity/process-liveness.ts): dead wherever they ran. */
const lapsed = new Set<string>();

/** Records processes found dead by their lapsed liveness lease, on whatever machine they ran. */
export function recordLapsedProcesses(tokens: readonly string[]): void {
  for (const token of tokens) lapsed.add(token);
}

/**
 * Whether `token` names a process known to be gone: one of this machine that is no longer running, or one whose
 * liveness lease lapsed (recordLapsedProcesses).
 */
export function heldByDeadProcess(token: string): boolean {
  return lapsed.has(token) || heldByDeadProcessHere(token);
}

/**
 * Whether a name tagged by taggedName names a leftover of a process known to be gone (heldByDeadProcess; false
 * for untagged names and live processes').
 */
export function leftByDeadProcess(name: string): boolean {
  const tilde = name.indexOf('~');
  return tilde > 0 && heldByDeadProcess(name.slice(0, tilde));
}

/**
 * True only when `token` names a process of this machine and PID namespace that is no longer running: no process
 * has its pid, or the one that has it started at another time, or only its exit status is left (a zombie). A
 * process this one may not look at (another user's, with /proc mounted `hidepid`) counts as running.
 */
export function heldByDeadProcessHere(token: string): boolean {
  const match = /^([0-9a-f]{12})-(\d{1,10})-(\d{1,20})-[0-9a-f]{16}$/.exec(token);
  const machine = machineKey();
  if (!match || !machine || match[1] !== machine) return false;
  const pid = Number(match[2]);
  if (pid <= 0) return false;
  try {
    // Signal 0 sends nothing: it only asks whether the pid exists (EPERM: it does, and is another user's).
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  const stat = processStat(pid);
  if (!stat) return false;
  return stat.state === 'Z' || stat.state === 'X' || stat.start !== match[3];
}

let cachedMachine: string | undefined;

function machineKey(): string {
  if (cachedMachine === undefined) {
    try {
      const bootId = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      const pidNamespace = fs.readlinkSync('/proc/self/ns/pid');
      cachedMachine = createHash('sha256').update(`${bootId}/${pidNamespace}`).digest('hex').slice(0, 12);
    } catch {
      cachedMachine = '';
    }
  }
  return cachedMachine;
}

/** The process's start time in clock ticks after boot (field 22 of /proc/<pid>/stat); '' when unknown. */
export function startTicks(pid: number): string {
  return processStat(pid)?.start ?? '';
}

/** A process's state letter (field 3) and start time (field 22); null when there is none or it is not readable. */
function processStat(pid: number): { state: string; start: string } | null {
  const fields = procStatFields(`/proc/${pid}/stat`);
  return fields && fields.length > 19 ? { state: fields[0], start: fields[19] } : null;
}
