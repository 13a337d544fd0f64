import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { Injectable, Logger } from '@nestjs/common';
import { GitCommand } from './git-command';
import { GitObjectReaders } from './git-object-readers';
import { isTransientGitFile, type ObjectFormat } from './git-repositories';
import { RepositoryPaths } from './repository-paths';

/**
 * The alternates line of every member: relative to the member's `objects/`, which sits at
 * `repositories/<owner>/<name>.git/objects` (or `.incoming/<x>.git/objects` while built), three levels below
 * the repositories root, as `.pools/<name>.git` sits two.
 */
export function alternatesLine(poolName: string): string {
  return `../../../.pools/${poolName}.git/objects`;
}

/** Configuration of a pool: nothing ever prunes it while members exist (docs/forks.md). */
const POOL_CONFIG: [string, string][] = [
  ['gc.auto', '0'],
  ['gc.pruneExpire', 'never'],
  ['gc.reflogExpire', 'never'],
  ['maintenance.auto', 'false'],
  ['core.logAllRefUpdates', 'false'],
  ['fetch.writeCommitGraph', 'false'],
];

/** Pack files that hold objects; `.keep`, `.bitmap`, `.mtimes` and `.promisor` are the source's own business. */
const PACK_SUFFIXES = ['.pack', '.idx', '.rev'];

/**
 * Object pools of fork networks (docs/forks.md): a bare repository per network under `.pools/`, which every
 * member reaches through `objects/info/alternates`. The pool only gains objects; members' refs are mirrored
 * into it under `refs/members/<repository id>/`.
 */
@Injectable()
export class GitPools {
  private readonly logger = new Logger('GitPools');

  constructor(
    private readonly git: GitCommand,
    private readonly paths: RepositoryPaths,
    private readonly readers: GitObjectReaders,
  ) {}

  newName(): string {
    return `${Date.now().toString(36)}-${randomBytes(8).toString('hex')}`;
  }

  /**
   * Builds a new pool from `memberDir`'s objects, hard-linked (no copy whatever the size), in the incoming area,
   * then moves it into `.pools/`. The member is not changed: it joins once its row names the pool. The member's
   * branches and tags, read before its objects are linked, are written under `refs/members/<memberId>/` when every
   * file listed was linked: the fetch that follows then finds them up to date instead of walking every object
   * they reach to prove it (seconds on a large history). When a file vanished (a repack meanwhile), the refs are
   * left to that fetch, which copies whatever the pool lacks.
   */
  async create(memberDir: string, objectFormat: ObjectFormat, memberId: number): Promise<string> {
    const name = this.newName();
    await fs.mkdir(this.paths.incoming(), { recursive: true });
    const aside = path.join(this.paths.incoming(), `pool-${name}.git`);
    try {
      const refs = await this.git.run(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/', 'refs/tags/'], { gitDir: memberDir });
      await this.git.run(['init', '--bare', '--quiet', `--object-format=${objectFormat}`, aside]);
      for (const [key, value] of POOL_CONFIG) await this.git.run(['config', key, value], { gitDir: aside });
      const complete = await linkObjects(path.join(memberDir, 'objects'), path.join(aside, 'objects'));
      const input = refs
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => {
          const space = line.indexOf(' ');
          return `create refs/members/${memberId}/${line.slice(space + 1 + 'refs/'.length)} ${line.slice(0, space)}\n`;
        })
        .join('');
      if (complete && input !== '') await this.git.run(['update-ref', '--stdin'], { gitDir: aside, input });
      await fs.mkdir(this.paths.pools(), { recursive: true, mode: 0o700 });
      await fs.rename(aside, this.paths.pool(name));
    } catch (error) {
      await fs.rm(aside, { recursive: true, force: true }).catch(() => undefined);
      throw error;
    }
    return name;
  }

  /**
   * Points `memberDir` at the pool: the alternates file is written aside and renamed, so that git never reads
   * half a line.
   */
  async join(memberDir: string, poolName: string): Promise<void> {
    const info = path.join(memberDir, 'objects', 'info');
    await fs.mkdir(info, { recursive: true });
    const temporary = path.join(info, `alternates.${randomBytes(4).toString('hex')}.lock`);
    await fs.writeFile(temporary, `${alternatesLine(poolName)}\n`, { mode: 0o600 });
    await fs.rename(temporary, path.join(info, 'alternates'));
    this.readers.forget(memberDir);
  }

  /**
   * Copies into the pool every object `memberDir`'s branches and tags reach that it lacks (usually none: a local
   * fetch moves only what is missing), and mirrors those refs under `refs/members/<memberId>/`.
   */
  async refresh(poolName: string, memberId: number, memberDir: string): Promise<void> {
    const pool = this.paths.pool(poolName);
    await this.git.run(
      [
        'fetch',
        '--quiet',
        '--no-tags',
        '--no-write-fetch-head',
        '--prune',
        '--no-auto-gc',
        '--no-auto-maintenance',
        memberDir,
        `+refs/heads/*:refs/members/${memberId}/heads/*`,
        `+refs/tags/*:refs/members/${memberId}/tags/*`,
      ],
      { gitDir: pool, offload: true, timeoutMs: 600_000 },
    );
  }

  /**
   * Copies into the pool the objects of one branch of `memberDir` that it lacks, and mirrors that branch under
   * `refs/members/<memberId>/heads/` (a pull request's head in a fork: only the branch's new objects move).
   */
  async shareBranch(poolName: string, memberId: number, memberDir: string, branch: string): Promise<void> {
    await this.git.run(
      [
        'fetch',
        '--quiet',
        '--no-tags',
        '--no-write-fetch-head',
        '--no-auto-gc',
        '--no-auto-maintenance',
        memberDir,
        `+refs/heads/${branch}:refs/members/${memberId}/heads/${branch}`,
      ],
      { gitDir: this.paths.pool(poolName), offload: true, timeoutMs: 600_000 },
    );
  }

  /** Whether `dir` (with its pool) holds the commit. */
  async hasCommit(dir: string, commit: string): Promise<boolean> {
    return (await this.git.probe(['cat-file', '-e', `${commit}^{commit}`], { gitDir: dir })).exitCode === 0;
  }

  /** The member's refs as the pool mirrors them: `refs/heads/...` and `refs/tags/...` with their object ids. */
  async memberRefs(poolName: string, memberId: number): Promise<{ ref: string; oid: string }[]> {
    const prefix = `refs/members/${memberId}/`;
    const out = await this.git.run(['for-each-ref', '--format=%(objectname) %(refname)', prefix], { gitDir: this.paths.pool(poolName) });
    return out
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => {
        const space = line.indexOf(' ');
        return { oid: line.slice(0, space), ref: `refs/${line.slice(space + 1 + prefix.length)}` };
      });
  }

  /**
   * Builds a fork at `aside` (in the incoming area): an empty bare repository that reaches the pool and holds
   * `refs` (written, not copied: the objects are in the pool), with HEAD on `defaultBranch`.
   */
  async buildMember(
    aside: string,
    poolName: string,
    spec: { objectFormat: ObjectFormat; defaultBranch: string; refs: { ref: string; oid: string }[] },
  ): Promise<void> {
    await this.git.run(['init', '--bare', '--quiet', `--object-format=${spec.objectFormat}`, aside]);
    await this.join(aside, poolName);
    await this.git.run(['symbolic-ref', 'HEAD', `refs/heads/${spec.defaultBranch}`], { gitDir: aside });
    if (spec.refs.length > 0) {
      const input = spec.refs.map(({ ref, oid }) => `create ${ref} ${oid}\n`).join('');
      await this.git.run(['update-ref', '--stdin'], { gitDir: aside, input });
    }
  }

  /** Drops a deleted member's refs from the pool; its objects stay, as everything in the pool does. */
  async forgetMember(poolName: string, memberId: number): Promise<void> {
    const pool = this.paths.pool(poolName);
    const refs = await this.memberRefs(poolName, memberId);
    if (refs.length === 0) return;
    const input = refs.map(({ ref }) => `delete refs/members/${memberId}/${ref.slice('refs/'.length)}\n`).join('');
    await this.git.run(['update-ref', '--stdin'], { gitDir: pool, input });
  }

  /** Removes a pool no member uses any more: parked in the trash first, as a repository directory is. */
  async remove(poolName: string): Promise<void> {
    const dir = this.paths.pool(poolName);
    const trash = this.paths.trash();
    await fs.mkdir(trash, { recursive: true });
    const parked = path.join(trash, `pool-${poolName}-${Date.now()}`);
    try {
      await fs.rename(dir, parked);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    await fs.rm(parked, { recursive: true, force: true });
  }

  async exists(poolName: string): Promise<boolean> {
    return fs.stat(path.join(this.paths.pool(poolName), 'objects')).then(
      (stat) => stat.isDirectory(),
      () => false,
    );
  }

  /** The pools on disk with the time their directory last changed (for the reconciliation). */
  async onDisk(): Promise<{ name: string; mtimeMs: number }[]> {
    let names: string[];
    try {
      names = await fs.readdir(this.paths.pools());
    } catch {
      return [];
    }
    const found: { name: string; mtimeMs: number }[] = [];
    for (const entry of names) {
      if (!entry.endsWith('.git')) continue;
      const stat = await fs.stat(path.join(this.paths.pools(), entry)).catch(() => null);
      if (stat) found.push({ name: entry.slice(0, -'.git'.length), mtimeMs: stat.mtimeMs });
    }
    return found;
  }

  /**
   * How `forkCommit` stands to `baseCommit`, read in `baseDir` with `forkDir`'s own objects added for this one
   * command (nothing is written): whether the fork's commit is an ancestor of the base's (a fast-forward), and how
   * many commits the base has that the fork lacks.
   */
  async compare(baseDir: string, forkDir: string, forkCommit: string, baseCommit: string): Promise<{ fastForward: boolean; behind: number }> {
    const env = { GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(forkDir, 'objects') };
    const ancestor = await this.git.probe(['merge-base', '--is-ancestor', forkCommit, baseCommit], { gitDir: baseDir, env });
    const counted = await this.git.run(['rev-list', '--count', baseCommit, '--not', forkCommit], { gitDir: baseDir, env });
    return { fastForward: ancestor.exitCode === 0, behind: Number(counted.trim()) || 0 };
  }

  /** Moves a branch of `dir` from `oldCommit` to `newCommit` (compare-and-swap); false when it moved meanwhile. */
  async moveBranch(dir: string, branch: string, newCommit: string, oldCommit: string): Promise<boolean> {
    const result = await this.git.probe(['update-ref', `refs/heads/${branch}`, newCommit, oldCommit], { gitDir: dir });
    return result.exitCode === 0;
  }

  /** A member's pool as its alternates file names it, or null. */
  async poolOf(memberDir: string): Promise<string | null> {
    const text = await fs.readFile(path.join(memberDir, 'objects', 'info', 'alternates'), 'utf8').catch(() => null);
    const match = text && /\.pools\/([a-z0-9-]{1,64})\.git\/objects/.exec(text);
    return match ? match[1] : null;
  }

  warn(message: string): void {
    this.logger.warn(message);
  }
}

/**
 * Hard-links the loose objects, then the pack files, of `from` into `to`; false when a file listed vanished before
 * it was linked (a repack on another instance). In that order, an object that existed before the call is linked
 * either loose or in a pack that existed when the packs were listed (a repack writes its new pack before it
 * deletes the loose objects and old packs it replaces), unless a file vanished, which the result says.
 */
async function linkObjects(from: string, to: string): Promise<boolean> {
  const entries = await fs.readdir(from, { withFileTypes: true }).catch(() => []);
  let complete = true;
  for (const entry of entries) {
    if (!entry.isDirectory() || !/^[0-9a-f]{2}$/.test(entry.name)) continue;
    const files = await fs.readdir(path.join(from, entry.name)).catch(() => [] as string[]);
    if (files.length === 0) continue;
    await fs.mkdir(path.join(to, entry.name), { recursive: true });
    for (const file of files)
      if (!isTransientGitFile(file)) complete = (await link(path.join(from, entry.name, file), path.join(to, entry.name, file))) && complete;
  }
  await fs.mkdir(path.join(to, 'pack'), { recursive: true });
  for (const file of await fs.readdir(path.join(from, 'pack')).catch(() => [] as string[])) {
    if (isTransientGitFile(file) || !PACK_SUFFIXES.some((suffix) => file.endsWith(suffix))) continue;
    complete = (await link(path.join(from, 'pack', file), path.join(to, 'pack', file))) && complete;
  }
  return complete;
}

/** Links one file; false when it vanished meanwhile. */
async function link(from: string, to: string): Promise<boolean> {
  try {
    await fs.link(from, to);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    if (code === 'EEXIST') return true;
    // Another file system (DATA_DIR spread over mounts): a copy costs space but keeps the pool whole.
    if (code === 'EXDEV' || code === 'EPERM') {
      await fs.copyFile(from, to).catch((copyError: NodeJS.ErrnoException) => {
        if (copyError.code !== 'ENOENT') throw copyError;
      });
      return fs.stat(to).then(
        () => true,
        () => false,
      );
    }
    throw error;
  }
  return true;
}
