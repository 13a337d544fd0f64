import { procStatFields } from '../common/proc-stat';

/**
 * The CPU time of one thread of this process, read from Linux's /proc. A worker reads its own thread id from
 * /proc/thread-self and reports it when ready; the pool then budgets jobs in CPU time, which a busy machine does
 * not stretch, instead of wall-clock time, which it does (a render that takes 2 s alone took 9.5 s at load 18).
 * Elsewhere, or when /proc cannot be read, `undefined` tells the caller to fall back to wall-clock time.
 */
export function threadCpuMs(threadId: number): number | undefined {
  // utime and stime: fields 14 and 15.
  const fields = procStatFields(`/proc/self/task/${threadId}/stat`);
  if (!fields) return undefined;
  const ticks = Number(fields[11]) + Number(fields[12]);
  // USER_HZ is 100 on every Linux architecture Node supports.
  return Number.isFinite(ticks) ? ticks * 10 : undefined;
}
