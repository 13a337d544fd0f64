import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { Injectable } from '@nestjs/common';
import { GitCommand, GitRunOptions } from './git-command';

/** HTTP Basic credentials for a remote; they reach git only through its environment. */
export interface RemoteCredentials {
  username: string;
  password: string;
}

/** Where and how git may reach a remote. */
export interface RemoteConnection {
  credentials?: RemoteCredentials;
  /** host, port and the addresses the host policy vetted: HTTP(S) connects to exactly these (DNS pinning). */
  pin?: { host: string; port: number; addresses: string[] };
  timeoutMs: number;
  signal?: AbortSignal;
  /** The most the command may write (bytes of new packs); beyond it git is stopped (RemoteTooLargeError). */
  maxBytes?: number;
}

/** A clone or fetch wrote more than its byte budget (RemoteConnection.maxBytes) and was stopped. */
export class RemoteTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the remote repository is larger than the ${maxBytes} bytes allowed`);
  }
}

/** How often a running clone or fetch has its written bytes measured against its budget. */
const BUDGET_POLL_MS = 200;

/** Bytes in `dir`'s pack directory (where received packs are written, `tmp_pack_*` while they arrive). */
async function packNames(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(path.join(dir, 'objects', 'pack'));
  } catch {
    return [];
  }
}

/** Removes the files of `dir`'s pack directory that are not among `kept` (what a stopped fetch wrote). */
async function removePacksSince(dir: string, kept: Set<string>): Promise<void> {
  for (const name of await packNames(dir)) {
    if (!kept.has(name)) await fs.rm(path.join(dir, 'objects', 'pack', name), { force: true });
  }
}

async function packBytes(dir: string): Promise<number> {
  const packs = path.join(dir, 'objects', 'pack');
  let names: string[];
  try {
    names = await fs.readdir(packs);
  } catch {
    return 0;
  }
  let total = 0;
  for (const name of names) {
    try {
      total += (await fs.stat(path.join(packs, name))).size;
    } catch {
      // Renamed or removed while measured.
    }
  }
  return total;
}

/**
 * git's configuration for one command through GIT_CONFIG_COUNT / GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n (git
 * 2.31+): never on a command line (visible in `ps`), never in the repository's config. Only protocols a
 * migration may use are enabled, so no remote helper (`ext::`, `file://`) can be reached indirectly.
 */
export function remoteEnvironment(access: Pick<RemoteConnection, 'credentials' | 'pin'>): Record<string, string> {
  // Every fetched object is kept in a pack (never exploded into loose objects), so a byte budget measures the
  // pack directory alone.
  const entries: [string, string][] = [
    ['http.followRedirects', 'false'],
    ['fetch.unpackLimit', '1'],
    ['transfer.unpackLimit', '1'],
  ];
  if (access.credentials) {
    const basic = Buffer.from(`${access.credentials.username}:${access.credentials.password}`, 'utf8').toString('base64');
    entries.push(['http.extraHeader', `Authorization: Basic ${basic}`]);
  }
  if (access.pin && access.pin.addresses.length > 0) {
    const host = access.pin.host.includes(':') ? `[${access.pin.host}]` : access.pin.host;
    const addresses = access.pin.addresses.map((address) => (address.includes(':') ? `[${address}]` : address));
    entries.push(['http.curloptResolve', `${host}:${access.pin.port}:${addresses.join(',')}`]);
  }
  const env: Record<string, string> = { GIT_ALLOW_PROTOCOL: 'http:https:git', GIT_CONFIG_COUNT: String(entries.length) };
  entries.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  return env;
}

/**
 * Fetched objects are checked as pushed ones are (receive.fsckObjects): a remote must not bring in what a push
 * may not (a tree entry named `..` or `.git`, a malformed object).
 */
const FSCK_FETCHED = 'fetch.fsckObjects=true';

/** Errors after which Forgejo prunes broken references and fetches once more (docs/mirrors.md). */
const BROKEN_REF_PATTERNS = ['cannot lock ref', 'unable to resolve reference', 'not our ref', 'Unable to create'];

export function isBrokenRefError(stderr: string): boolean {
  return BROKEN_REF_PATTERNS.some((pattern) => stderr.includes(pattern));
}

/**
 * Clones and fetches of remote repositories (migrations and pull mirrors), through GitCommand. Redirects are
 * never followed (`http.followRedirects=false`, docs/mirrors.md).
 */
@Injectable()
export class GitRemotes {
  constructor(private readonly git: GitCommand) {}

  /**
   * `git clone --mirror` into `dir` (which must not exist). The mirror's config keeps the remote URL and
   * `http.followRedirects=false`, nothing else of the access.
   */
  async cloneMirror(url: string, dir: string, access: RemoteConnection): Promise<void> {
    await this.withinBudget(dir, access, (signal) =>
      this.git.run(
        ['-c', FSCK_FETCHED, 'clone', '--mirror', '--quiet', '-c', 'http.followRedirects=false', '--', url, dir],
        this.options({ ...access, signal }),
      ),
    );
    // A clone that finished between two measurements is measured once more.
    if (access.maxBytes !== undefined && (await packBytes(dir)) > access.maxBytes) throw new RemoteTooLargeError(access.maxBytes);
  }

  /** For a pull mirror: tags are fetched explicitly too (`+refs/tags/*:refs/tags/*`). */
  async addTagRefspec(dir: string): Promise<void> {
    await this.git.run(['config', '--add', 'remote.origin.fetch', '+refs/tags/*:refs/tags/*'], { gitDir: dir });
  }

  /** For a plain migration: the copy forgets where it came from. */
  async removeOrigin(dir: string): Promise<void> {
    await this.git.run(['remote', 'remove', 'origin'], { gitDir: dir });
  }

  /**
   * `git fetch --prune --tags origin`, all ref updates in one transaction (`--atomic`), so a fetch that fails
   * or is stopped leaves every ref as it was.
   */
  async fetchMirror(dir: string, access: RemoteConnection): Promise<void> {
    const before = access.maxBytes === undefined ? null : { refs: await this.refs(dir), packs: new Set(await packNames(dir)), bytes: await packBytes(dir) };
    try {
      await this.withinBudget(dir, access, (signal) =>
        this.git.run(['-c', FSCK_FETCHED, 'fetch', '--quiet', '--prune', '--tags', '--atomic', 'origin'], {
          ...this.options({ ...access, signal }),
          gitDir: dir,
        }),
      );
    } catch (error) {
      // Stopped part-way: what it had written goes. The refs are put back too: a fetch stopped just after its
      // ref transaction committed would otherwise leave them naming objects of the packs removed here.
      if (error instanceof RemoteTooLargeError && before) await this.undoFetch(dir, before);
      throw error;
    }
    // A fetch that finished between two measurements is measured once more; over its budget, it is undone. The
    // mirror's sync holds the mirror's claim and nothing else writes to a mirror, so no other write shares those
    // packs.
    if (!before || access.maxBytes === undefined || (await packBytes(dir)) - before.bytes <= access.maxBytes) return;
    await this.undoFetch(dir, before);
    throw new RemoteTooLargeError(access.maxBytes);
  }

  /** The refs back to what they were (one transaction), then the packs written since removed. */
  private async undoFetch(dir: string, before: { refs: Map<string, string>; packs: Set<string> }): Promise<void> {
    const after = await this.refs(dir);
    const lines: string[] = [];
    for (const [ref, oid] of after) {
      const old = before.refs.get(ref);
      if (old === undefined) lines.push(`delete ${ref} ${oid}`);
      else if (old !== oid) lines.push(`update ${ref} ${old} ${oid}`);
    }
    for (const [ref, oid] of before.refs) if (!after.has(ref)) lines.push(`create ${ref} ${oid}`);
    if (lines.length > 0) await this.git.run(['update-ref', '--stdin'], { gitDir: dir, input: `${lines.join('\n')}\n` });
    await removePacksSince(dir, before.packs);
  }

  /** Every ref with the object it names. */
  private async refs(dir: string): Promise<Map<string, string>> {
    const out = await this.git.run(['for-each-ref', '--format=%(objectname) %(refname)'], { gitDir: dir });
    const refs = new Map<string, string>();
    for (const line of out.split('\n')) {
      const space = line.indexOf(' ');
      if (space > 0) refs.set(line.slice(space + 1), line.slice(0, space));
    }
    return refs;
  }

  /**
   * Runs `command` while the growth of `dir`'s packs is measured every BUDGET_POLL_MS; past `maxBytes` the
   * command is stopped (through its signal) and RemoteTooLargeError thrown instead of git's abort.
   */
  private async withinBudget(dir: string, access: RemoteConnection, command: (signal: AbortSignal | undefined) => Promise<unknown>): Promise<void> {
    const budget = access.maxBytes;
    if (budget === undefined) {
      await command(access.signal);
      return;
    }
    const stop = new AbortController();
    const forward = () => stop.abort();
    if (access.signal?.aborted) stop.abort();
    else access.signal?.addEventListener('abort', forward, { once: true });
    const baseline = await packBytes(dir);
    let over = false;
    let measuring = false;
    const timer = setInterval(() => {
      if (measuring) return;
      measuring = true;
      void packBytes(dir)
        .then((bytes) => {
          if (bytes - baseline > budget) {
            over = true;
            stop.abort();
          }
        })
        .finally(() => (measuring = false));
    }, BUDGET_POLL_MS);
    try {
      await command(stop.signal);
    } catch (error) {
      if (over) throw new RemoteTooLargeError(budget);
      throw error;
    } finally {
      clearInterval(timer);
      access.signal?.removeEventListener('abort', forward);
    }
  }

  /** Removes the remote-tracking refs the remote no longer has (the recovery of a sync that failed on a broken ref, docs/mirrors.md). */
  async pruneOrigin(dir: string, access: RemoteConnection): Promise<void> {
    await this.git.run(['remote', 'prune', 'origin'], { ...this.options(access), gitDir: dir });
  }

  /** The branch HEAD names, or null when HEAD is detached or missing. */
  async headBranch(dir: string): Promise<string | null> {
    const result = await this.git.probe(['symbolic-ref', '--quiet', '--short', 'HEAD'], { gitDir: dir, offload: true });
    return result.exitCode === 0 ? result.stdout.trim() : null;
  }

  /**
   * The content of every blob of at most `maxBytes` in the repository (the candidates for LFS pointer files),
   * handed to `each` in slices of at most 1 000 blobs, so that memory stays bounded whatever the repository.
   * `reachable`: only the blobs that the refs reach (a mirror keeps objects its source no longer has until git
   * prunes them), else every object the repository holds (a fresh clone, where that is the same).
   */
  async smallBlobs(dir: string, maxBytes: number, each: (blobs: Buffer[]) => Promise<void>, options: { reachable?: boolean } = {}): Promise<void> {
    const check = '--batch-check=%(objectname) %(objecttype) %(objectsize)';
    const listed = options.reachable
      ? await this.git.run(['cat-file', check], {
          gitDir: dir,
          offload: true,
          input: await this.git.run(['rev-list', '--objects', '--all', '--no-object-names', `--filter=blob:limit=${maxBytes + 1}`], {
            gitDir: dir,
            offload: true,
          }),
        })
      : await this.git.run(['cat-file', '--batch-all-objects', check], { gitDir: dir, offload: true });
    const oids: string[] = [];
    for (const line of listed.split('\n')) {
      const [oid, type, size] = line.split(' ');
      if (type === 'blob' && Number(size) <= maxBytes) oids.push(oid);
    }
    for (let start = 0; start < oids.length; start += 1000) {
      const out = await this.git.runBuffer(['cat-file', '--batch'], { gitDir: dir, input: `${oids.slice(start, start + 1000).join('\n')}\n`, offload: true });
      const blobs: Buffer[] = [];
      let at = 0;
      while (at < out.length) {
        const end = out.indexOf(0x0a, at);
        if (end < 0) break;
        const size = Number(out.subarray(at, end).toString('utf8').split(' ')[2]);
        if (!Number.isSafeInteger(size)) break;
        blobs.push(out.subarray(end + 1, end + 1 + size));
        at = end + 1 + size + 1;
      }
      await each(blobs);
    }
  }

  async hasCommits(dir: string): Promise<boolean> {
    return (await this.git.run(['rev-list', '-n1', '--all'], { gitDir: dir, offload: true })).trim() !== '';
  }

  async objectFormat(dir: string): Promise<'sha1' | 'sha256'> {
    const format = (await this.git.run(['rev-parse', '--show-object-format'], { gitDir: dir })).trim();
    return format === 'sha256' ? 'sha256' : 'sha1';
  }

  /** Branch names in ref order. */
  async branches(dir: string): Promise<string[]> {
    const out = await this.git.run(['for-each-ref', '--format=%(refname:strip=2)', 'refs/heads/'], { gitDir: dir, offload: true });
    return out.split('\n').filter((line) => line !== '');
  }

  /** The newest committer date among `refs/heads/*` (unix seconds), or null without branches. */
  async newestBranchCommitTime(dir: string): Promise<number | null> {
    const out = await this.git.run(['for-each-ref', '--sort=-committerdate', '--count=1', '--format=%(committerdate:unix)', 'refs/heads/'], {
      gitDir: dir,
      offload: true,
    });
    const value = Number(out.trim());
    return out.trim() === '' || !Number.isFinite(value) ? null : value;
  }

  private options(access: RemoteConnection): GitRunOptions {
    return { env: remoteEnvironment(access), timeoutMs: access.timeoutMs, signal: access.signal, processGroup: true, offload: true };
  }
}
