import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { Injectable, Logger } from '@nestjs/common';
import { taggedName } from '../common/process-identity';
import { GitCommand, GitError } from './git-command';
import { GitLauncher, SkippedNames } from './git-launcher';
import { GitObjectReaders } from './git-object-readers';
import { RepositoryPaths } from './repository-paths';

// One cohesive thing, kept whole though long: bare repositories on disk (create, adopt, move, remove, size).

export type ObjectFormat = 'sha1' | 'sha256';

export interface Signature {
  name: string;
  email: string;
  /** Seconds since the epoch, UTC. */
  whenUnix: number;
}

export interface InitialCommit {
  message: string;
  author: Signature;
  /** Files at the root of the tree, in any order. */
  files: { name: string; content: string }[];
}

export interface NewRepository {
  objectFormat: ObjectFormat;
  defaultBranch: string;
  initialCommit?: InitialCommit;
}

/** The repository directory could not be created or filled. */
export class RepositoryStorageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RepositoryStorageError';
  }
}

/** The path is taken on disk by something that is not a leftover repository directory. */
export class RepositoryPathTakenError extends RepositoryStorageError {
  constructor() {
    super('the repository path is already taken on disk');
    this.name = 'RepositoryPathTakenError';
  }
}

/**
 * Bare repositories on disk: creation (with an optional first commit built from plumbing, no working copy),
 * HEAD, size and removal. Every git call goes through GitCommand.
 */
@Injectable()
export class GitRepositories {
  private readonly logger = new Logger('GitRepositories');

  constructor(
    private readonly git: GitCommand,
    private readonly paths: RepositoryPaths,
    private readonly readers: GitObjectReaders,
    private readonly launcher: GitLauncher,
  ) {}

  /**
   * Creates the bare repository at `dir`. Whatever this call created is removed again when a step fails, and
   * a path that is already taken is refused untouched — unless it is a repository directory left behind by a
   * deletion that was interrupted after its row was gone (the caller holds the row for this path now).
   */
  async create(dir: string, spec: NewRepository): Promise<void> {
    this.readers.forget(dir);
    await this.clearLeftover(dir);
    try {
      await fs.mkdir(path.dirname(dir), { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new RepositoryStorageError(`cannot create the owner directory: ${(error as Error).message}`, { cause: error });
    }
    try {
      await this.git.run(['init', '--bare', '--quiet', `--object-format=${spec.objectFormat}`, dir]);
    } catch (error) {
      // git init may have created part of the directory before failing.
      if (await exists(dir)) await this.removeDirectory(dir);
      throw error;
    }
    try {
      await this.setHead(dir, spec.defaultBranch);
      if (spec.initialCommit) await this.commitFiles(dir, spec.defaultBranch, spec.initialCommit);
    } catch (error) {
      await this.removeDirectory(dir);
      throw error;
    }
  }

  /**
   * Moves a repository directory to a new path (a rename): one atomic rename, refused when the target is
   * taken, except by the leftover of an interrupted deletion (the caller holds the row for that path now).
   */
  async move(from: string, to: string): Promise<void> {
    // A batch reader keeps packs open: none may go on answering for a path that now holds another repository.
    this.readers.forget(from);
    this.readers.forget(to);
    await this.clearLeftover(to);
    try {
      await fs.mkdir(path.dirname(to), { recursive: true });
      await fs.rename(from, to);
    } catch (error) {
      throw new RepositoryStorageError(`cannot move the repository directory: ${(error as Error).message}`, { cause: error });
    }
  }

  async setHead(dir: string, branch: string): Promise<void> {
    await this.git.run(['symbolic-ref', 'HEAD', `refs/heads/${branch}`], { gitDir: dir });
  }

  async branchExists(dir: string, branch: string): Promise<boolean> {
    const result = await this.git.probe(['show-ref', '--verify', '--quiet', `refs/heads/${branch}`], { gitDir: dir });
    return result.exitCode === 0;
  }

  /**
   * Brings the commit-graph file up to date, with changed-path Bloom filters: path-limited history (the content
   * API's `last_commit_sha`, `commits?path=`) then skips most commits without reading their trees. `--split`
   * writes only the commits that are new since the last call, as a new layer.
   */
  async refreshCommitGraph(dir: string): Promise<void> {
    try {
      // Through the launcher: a fork of the server for it blocked every request for tens of milliseconds.
      await this.git.run(['commit-graph', 'write', '--reachable', '--changed-paths', '--split'], { gitDir: dir, offload: true });
    } catch (error) {
      // Another git process (a push on another instance, a maintenance run) holds commit-graph-chain.lock: the
      // graph is a cache, and the next push or write brings it up to date.
      if (error instanceof GitError && /\.lock'?:? File exists|Unable to create .*\.lock/i.test(error.message)) return;
      throw error;
    }
  }

  /**
   * Total bytes of the regular files under `dir` (the stored git size quota counts), measured while other
   * pushes may run: git's transient files (the quarantine of a push in progress, locks, packs being written) are
   * not counted, nor the commit graph, a cache written in the background after pushes (commit-graphs.ts) whose
   * layers come and go as it is rewritten; a file or directory that vanishes while it is walked (a quarantine
   * moved in, a lock file given back, a repack) counts as gone rather than failing the walk.
   */
  async size(dir: string): Promise<number> {
    // The walk runs in the launcher process: a repository holds thousands of loose objects between two auto-gcs,
    // and their lookups, done here, were 30 ms of callbacks on the event loop per push, inside the section that
    // serialises the pushes to the repository.
    const own = await this.launcher.size(dir, NOT_MEASURED);
    if (!(await exists(path.join(dir, 'objects', 'info', 'alternates')))) return own;
    // A member of a fork network counts what it would cost alone (docs/quota.md): its own directory, plus the
    // reachable objects it does not store itself (they are in the pool).
    const ownObjects = await this.launcher.size(path.join(dir, 'objects'), NOT_MEASURED);
    const out = await this.git.run(['rev-list', '--all', '--objects', '--disk-usage'], { gitDir: dir, offload: true, timeoutMs: 600_000 });
    const reached = Number(out.trim()) || 0;
    return own + Math.max(0, reached - ownObjects);
  }

  /**
   * Removes a repository directory: first moved into the trash (one atomic rename frees the path at once),
   * then deleted. A missing directory is not an error.
   */
  async remove(dir: string): Promise<void> {
    const parked = await this.park(dir);
    if (parked) await fs.rm(parked, { recursive: true, force: true });
  }

  /**
   * Moves a repository directory prepared elsewhere (a migration's clone) to `dir`: one rename. A leftover of a
   * deleted repository at `dir` is cleared first, as in `create`; the caller holds the row for this path.
   */
  async adopt(sourceDir: string, dir: string): Promise<void> {
    this.readers.forget(dir);
    await this.clearLeftover(dir);
    await fs.mkdir(path.dirname(dir), { recursive: true });
    // The directory's time tells the start-up reconciliation how long it has been in place: a directory without a
    // row is a crash's leftover only once it is older than any transaction could be.
    const now = new Date();
    await fs.utimes(sourceDir, now, now);
    await fs.rename(sourceDir, dir);
  }

  /** Removes what was built in the incoming area (a missing directory is not an error). */
  async removeAside(dir: string): Promise<void> {
    if (path.dirname(dir) !== this.paths.incoming()) throw new Error(`not in the incoming area: ${dir}`);
    await fs.rm(dir, { recursive: true, force: true });
  }

  /** A fresh, empty path under the incoming directory (not created). */
  async incomingPath(): Promise<string> {
    await fs.mkdir(this.paths.incoming(), { recursive: true });
    return path.join(this.paths.incoming(), taggedName(`${Date.now()}-${randomBytes(8).toString('hex')}.git`));
  }

  /** Deletes what an interrupted removal left in the trash, and clones of migrations a crash interrupted. */
  async emptyTrash(): Promise<void> {
    await this.clearStaleIncoming();
    const trash = this.paths.trash();
    let names: string[];
    try {
      names = await fs.readdir(trash);
    } catch {
      return;
    }
    for (const name of names) await fs.rm(path.join(trash, name), { recursive: true, force: true });
  }

  /**
   * Builds the first commit with plumbing, straight into the bare repository: one blob per file
   * (`hash-object -w`), a tree (`mktree`), the commit (`commit-tree`), then the branch (`update-ref`, which
   * refuses to overwrite an existing ref).
   */
  private async commitFiles(dir: string, branch: string, commit: InitialCommit): Promise<void> {
    const entries: string[] = [];
    for (const file of commit.files) {
      const oid = (await this.git.run(['hash-object', '-w', '--stdin'], { gitDir: dir, input: Buffer.from(file.content, 'utf8') })).trim();
      entries.push(`100644 blob ${oid}\t${file.name}\n`);
    }
    const tree = (await this.git.run(['mktree'], { gitDir: dir, input: entries.join('') })).trim();
    const date = `@${commit.author.whenUnix} +0000`;
    const identity = {
      GIT_AUTHOR_NAME: commit.author.name,
      GIT_AUTHOR_EMAIL: commit.author.email,
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_NAME: commit.author.name,
      GIT_COMMITTER_EMAIL: commit.author.email,
      GIT_COMMITTER_DATE: date,
    };
    const oid = (await this.git.run(['commit-tree', tree, '-m', commit.message], { gitDir: dir, env: identity })).trim();
    await this.git.run(['update-ref', `refs/heads/${branch}`, oid, ''], { gitDir: dir });
  }

  /**
   * Clones older than any migration may run (600 s) were left by a crash. Younger ones stay: another process
   * sharing DATA_DIR may own them, and those of a process of this machine that is gone are the reconciliation's,
   * which runs next at start-up and reports what it removes.
   */
  private async clearStaleIncoming(): Promise<void> {
    let names: string[];
    try {
      names = await fs.readdir(this.paths.incoming());
    } catch {
      return;
    }
    const staleBefore = Date.now() - 3_600_000;
    for (const name of names) {
      const entry = path.join(this.paths.incoming(), name);
      const stat = await fs.lstat(entry).catch(() => null);
      if (stat && stat.mtimeMs < staleBefore) await fs.rm(entry, { recursive: true, force: true });
    }
  }

  private async clearLeftover(dir: string): Promise<void> {
    let stat;
    try {
      stat = await fs.lstat(dir);
    } catch {
      return;
    }
    if (stat.isDirectory() && (await exists(path.join(dir, 'HEAD'))) && (await exists(path.join(dir, 'objects')))) {
      this.logger.warn(`removing the leftover directory of a deleted repository: ${dir}`);
      await this.remove(dir);
      return;
    }
    throw new RepositoryPathTakenError();
  }

  private async park(dir: string): Promise<string | null> {
    this.readers.forget(dir);
    const trash = this.paths.trash();
    await fs.mkdir(trash, { recursive: true });
    const parked = path.join(trash, `${path.basename(dir)}-${Date.now()}-${randomBytes(4).toString('hex')}`);
    try {
      await fs.rename(dir, parked);
      return parked;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  private async removeDirectory(dir: string): Promise<void> {
    try {
      await fs.rm(dir, { recursive: true, force: true });
    } catch (error) {
      this.logger.error(`could not remove ${dir} after a failed creation: ${(error as Error).message}`);
    }
  }
}

/**
 * Names of files git writes only for the time of one operation: `*.lock` (a ref, the config, packed-refs),
 * `tmp_objdir-*` and `incoming-*` (a push's objects before its refs move), `tmp_pack_*`/`tmp_idx_*`/`tmp_obj_*`
 * (a pack or loose object being written), and the temporary index of an older Anvil (`anvil-index-*`).
 */
export const TRANSIENT_GIT_FILES: SkippedNames = {
  suffixes: ['.lock'],
  prefixes: ['tmp_objdir-', 'incoming-', 'anvil-index-'],
  patterns: ['^tmp_(pack|idx|obj|rev|mtimes)_'],
};

/**
 * What a repository's size leaves out (docs/quota.md): the transient files; the commit graph
 * (`objects/info/commit-graph`, `objects/info/commit-graphs/`, and the `tmp_graph_*` file of a write in progress);
 * and `refs/pull/`, the server's own refs of pull request heads: a directory and a file of 41 bytes per pull
 * request ever opened, whose walk cost a push to a base with 200 open pull requests 25-60 ms (what they point at
 * is counted with the objects).
 */
const NOT_MEASURED: SkippedNames = {
  suffixes: TRANSIENT_GIT_FILES.suffixes,
  prefixes: [...TRANSIENT_GIT_FILES.prefixes, 'tmp_graph_'],
  patterns: [...TRANSIENT_GIT_FILES.patterns, '^commit-graphs?$'],
  paths: ['refs/pull'],
};

const transientPatterns = TRANSIENT_GIT_FILES.patterns.map((source) => new RegExp(source));

export function isTransientGitFile(name: string): boolean {
  return (
    TRANSIENT_GIT_FILES.suffixes.some((suffix) => name.endsWith(suffix)) ||
    TRANSIENT_GIT_FILES.prefixes.some((prefix) => name.startsWith(prefix)) ||
    transientPatterns.some((pattern) => pattern.test(name))
  );
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.lstat(file);
    return true;
  } catch {
    return false;
  }
}
