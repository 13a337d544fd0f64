import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { leftByDeadProcess } from '../common/process-identity';
import { isTransientGitFile } from '../git/git-repositories';

// What the reconciliation reads of DATA_DIR: directory listings, stale leftovers and refs, without spawning git.

export async function isDirectory(dir: string): Promise<boolean> {
  return (await fs.lstat(dir).catch(() => null))?.isDirectory() ?? false;
}

export async function entryNames(dir: string): Promise<string[]> {
  return fs.readdir(dir).catch(() => []);
}

export async function directoryNames(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
}

/** Entries of `dir` older than `staleBefore`, or left by a process known to be gone (process-identity.ts). */
export async function staleEntries(dir: string, staleBefore: number): Promise<string[]> {
  const stale: string[] = [];
  for (const name of await entryNames(dir)) {
    const entry = path.join(dir, name);
    const stat = await fs.lstat(entry).catch(() => null);
    if (stat && (stat.mtimeMs < staleBefore || leftByDeadProcess(name))) stale.push(entry);
  }
  return stale;
}

/**
 * Regular files under `dir`, at any depth, older than `staleBefore`, or (whatever their age) named by, or inside a
 * directory named by, a process known to be gone (process-identity.ts).
 */
export async function staleFiles(dir: string, staleBefore: number, deadOwner = false): Promise<string[]> {
  const stale: string[] = [];
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const child = path.join(dir, entry.name);
    const dead = deadOwner || leftByDeadProcess(entry.name);
    if (entry.isDirectory()) stale.push(...(await staleFiles(child, staleBefore, dead)));
    else {
      const stat = await fs.lstat(child).catch(() => null);
      if (stat && (dead || stat.mtimeMs < staleBefore)) stale.push(child);
    }
  }
  return stale;
}

/** The newest modification time (ms) of the places a ref or object change touches: refs, packed-refs, objects. */
export async function newestChange(dir: string): Promise<number> {
  let newest = 0;
  const stamp = async (file: string) => {
    const stat = await fs.lstat(file).catch(() => null);
    if (stat) newest = Math.max(newest, stat.mtimeMs);
    return stat;
  };
  await stamp(path.join(dir, 'packed-refs'));
  await stamp(path.join(dir, 'objects'));
  await stamp(path.join(dir, 'objects', 'pack'));
  const walk = async (folder: string): Promise<void> => {
    await stamp(folder);
    const entries = await fs.readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) if (entry.isDirectory()) await walk(path.join(folder, entry.name));
  };
  await walk(path.join(dir, 'refs'));
  return newest;
}

/** Branch names of a bare repository, from its loose refs and packed-refs, without spawning git. */
export async function branchesOf(dir: string): Promise<Set<string>> {
  const branches = new Set<string>();
  const heads = path.join(dir, 'refs', 'heads');
  const walk = async (folder: string, prefix: string): Promise<void> => {
    const entries = await fs.readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (isTransientGitFile(entry.name)) continue;
      if (entry.isDirectory()) await walk(path.join(folder, entry.name), `${prefix}${entry.name}/`);
      else branches.add(`${prefix}${entry.name}`);
    }
  };
  await walk(heads, '');
  const packed = await fs.readFile(path.join(dir, 'packed-refs'), 'utf8').catch(() => '');
  for (const line of packed.split('\n')) {
    const match = /^[0-9a-f]+ refs\/heads\/(.+)$/.exec(line);
    if (match) branches.add(match[1]);
  }
  return branches;
}

/** `owner/name` (lowercased, without `.git`) of every repository directory, with its time. */
export async function repositoryDirectories(root: string): Promise<{ relative: string; dir: string; mtimeMs: number }[]> {
  const found: { relative: string; dir: string; mtimeMs: number }[] = [];
  for (const owner of await directoryNames(root)) {
    if (owner.startsWith('.')) continue;
    for (const name of await directoryNames(path.join(root, owner))) {
      if (!name.endsWith('.git')) continue;
      const dir = path.join(root, owner, name);
      const stat = await fs.lstat(dir).catch(() => null);
      if (stat) found.push({ relative: `${owner}/${name.slice(0, -4)}`, dir, mtimeMs: stat.mtimeMs });
    }
  }
  return found;
}

/** git's and Anvil's transient files in a repository, older than any live operation. */
export async function gitLeftovers(dir: string, staleBefore: number): Promise<string[]> {
  const candidates: string[] = [];
  const collect = async (folder: string, recursive: boolean): Promise<void> => {
    let entries;
    try {
      entries = await fs.readdir(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const child = path.join(folder, entry.name);
      if (isTransientGitFile(entry.name)) candidates.push(child);
      else if (recursive && entry.isDirectory()) await collect(child, true);
    }
  };
  await collect(dir, false);
  await collect(path.join(dir, 'objects'), false);
  await collect(path.join(dir, 'objects', 'pack'), false);
  await collect(path.join(dir, 'refs'), true);
  const stale: string[] = [];
  for (const candidate of candidates) {
    const stat = await fs.lstat(candidate).catch(() => null);
    if (stat && stat.mtimeMs < staleBefore) stale.push(candidate);
  }
  return stale;
}
