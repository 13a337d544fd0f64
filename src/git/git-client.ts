import { currentScope, runInScope } from '../common/request-scope';

/**
 * Whom git work is done for: the address and the signed-in user (null: anonymous) that the fair shares of
 * GitProcesses count, and a signal that fires when that client has gone away, so that git stops with it.
 */
export interface GitClient {
  address: string;
  userId: number | null;
  signal?: AbortSignal;
}

/**
 * Runs `work` on behalf of `client`: the git commands it starts (GitCommand) count against that client's share
 * and stop when its signal fires. Set once per API request, where the caller is known (authentication).
 */
export function runForGitClient<T>(client: GitClient, work: () => T): T {
  return runInScope({ gitClient: client }, work);
}

/** Runs `work` for nobody: shared background work (a history walk many requests wait for) must not stop when
 * the request that happened to start it goes away, nor count against its share. */
export function runDetachedFromGitClient<T>(work: () => T): T {
  return runInScope({ gitClient: null }, work);
}

/**
 * Runs `work` for nobody and in the background: besides what runDetachedFromGitClient does, the git commands it
 * starts go through a launcher of their own at a lower CPU priority (GitLauncher#background), so that a queue of
 * them (the re-tests of 200 pull requests after a push to their base) neither delays a request's git nor takes
 * the processor from it.
 */
export function runInBackground<T>(work: () => T): T {
  return runInScope({ gitClient: null, background: true }, work);
}

/** Whether the work now running is background work (runInBackground). */
export function inBackground(): boolean {
  return currentScope()?.background === true;
}

/** The client of the work now running, or undefined for the server's own work. */
export function currentGitClient(): GitClient | undefined {
  return currentScope()?.gitClient ?? undefined;
}

/** The key a client's address share is counted under: IPv4 by address, IPv6 by its /64 (one host's block). */
export function addressKey(address: string): string {
  const plain = address.startsWith('ip:') ? address.slice(3) : address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(plain);
  if (mapped) return mapped[1];
  if (!plain.includes(':')) return plain;
  const halves = plain.split('::');
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length > 1 && halves[1] ? halves[1].split(':') : [];
  const groups = halves.length > 1 ? [...head, ...Array(Math.max(0, 8 - head.length - tail.length)).fill('0'), ...tail] : head;
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/%.*$/, '').toLowerCase())
    .join(':')}::/64`;
}
