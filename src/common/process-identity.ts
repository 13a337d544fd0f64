import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';

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

/** True only when `token` names a process of this machine and PID namespace that is no longer running. */
export function heldByDeadProcessHere(token: string): boolean {
  const match = /^([0-9a-f]{12})-(\d{1,10})-(\d{1,20})-[0-9a-f]{16}$/.exec(token);
  const machine = machineKey();
  if (!match || !machine || match[1] !== machine) return false;
  return startTicks(Number(match[2])) !== match[3];
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

/**
 * The process's start time in clock ticks after boot (field 22 of /proc/<pid>/stat); '' when there is no such
 * process, or only its exit status is left (a zombie).
 */
export function startTicks(pid: number): string {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces or parentheses: count after the last one.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return '';
    return fields[19] ?? '';
  } catch {
    return '';
  }
}
