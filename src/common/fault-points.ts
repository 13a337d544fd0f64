/**
 * Named points on the write paths where the crash tests kill the server (SIGKILL, as a power cut or the
 * kernel's OOM killer would): a test starts a real server with ANVIL_FAULT_KILL_AT=<point> (or `<point>:N`, the
 * N-th pass), then restarts it on the same data and checks that nothing acknowledged was lost and nothing
 * half-made stayed. Unarmed (always, outside those tests) a point is one property read of an empty object.
 */
export const FAULT_POINTS = [
  // Repository creation: built aside, moved into place inside the row's transaction, committed.
  'repository.create.built',
  'repository.create.moved',
  'repository.create.committed',
  // Repository deletion: the row gone, the directory not yet.
  'repository.delete.committed',
  // Repository rename: the directory moved (journalled), the row not yet changed; the row changed, journal kept.
  'repository.rename.moved',
  'repository.rename.committed',
  // Uploads: the file received and parked, the row committed before the file's rename, the rename done.
  'attachment.parked',
  'attachment.committed',
  'package.parked',
  'package.committed',
  // Commits made by the API (contents): the tree built in its temporary index, the ref moved.
  'commit.tree-written',
  'contents.ref-updated',
  // A push: objects received into git's quarantine, before the refs move.
  'push.received',
  // Stars: the row and the counter written, not yet committed.
  'star.written',
  // Releases without attachments: the new tag on disk (the row not yet), the row committed (not yet answered).
  'release.tag-created',
  'release.committed',
  // Migrations: the clone made aside, no row yet. Mirror syncs: the fetch done, its recording not yet.
  'migration.cloned',
  'mirror.fetched',
  // Pull request merges: the intent recorded (the base not yet moved), the base moved, the push's effects recorded
  // (the pull request not yet merged).
  'merge.intent-recorded',
  'merge.ref-updated',
  'merge.push-recorded',
  // Webhooks: a delivery sent (the receiver has it), its outcome not yet recorded.
  'webhook.sent',
] as const;

export type FaultPoint = (typeof FAULT_POINTS)[number];

/** Armed points and the pass at which each kills (1: the first). */
let armed: Partial<Record<FaultPoint, number>> = {};
/** Processes killed with this one (the server, from a process it started). */
let alsoKilled: number[] = [];
const passes: Partial<Record<FaultPoint, number>> = {};

/**
 * Arms the points named by the configuration (`point` or `point:N`); unknown names are refused. A point that
 * fires kills the processes `alongWith` first, then this one.
 */
export function armFaultPoints(specs: string[], alongWith: number[] = []): void {
  const next: Partial<Record<FaultPoint, number>> = {};
  for (const spec of specs) {
    const [name, count] = spec.split(':');
    if (!(FAULT_POINTS as readonly string[]).includes(name)) throw new Error(`ANVIL_FAULT_KILL_AT: unknown fault point ${JSON.stringify(name)}`);
    const pass = count === undefined ? 1 : Number(count);
    if (!Number.isInteger(pass) || pass < 1) throw new Error(`ANVIL_FAULT_KILL_AT: bad pass count in ${JSON.stringify(spec)}`);
    next[name as FaultPoint] = pass;
  }
  armed = next;
  alsoKilled = alongWith;
}

/** Kills the process here when this point is armed and this is its chosen pass. */
export function faultPoint(point: FaultPoint): void {
  const at = armed[point];
  if (at === undefined) return;
  const pass = (passes[point] ?? 0) + 1;
  passes[point] = pass;
  if (pass !== at) return;
  for (const pid of alsoKilled) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  process.kill(process.pid, 'SIGKILL');
}
