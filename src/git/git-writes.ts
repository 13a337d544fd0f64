import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { Injectable } from '@nestjs/common';
import { faultPoint } from '../common/fault-points';
import { GitCommand, GitError } from './git-command';
import { RepositoryPaths } from './repository-paths';

/** A person and a moment, as git records them in commits and tags. */
export interface GitIdentity {
  name: string;
  email: string;
  /** Seconds since the epoch. */
  whenUnix: number;
}

/** One file of a commit: new bytes at `path`, or the path removed. */
export type TreeChange = { path: string; content: Buffer; executable?: boolean } | { path: string; remove: true };

export interface CommitSpec {
  /** The commit the new one follows; null for the first commit of a repository. */
  parent: string | null;
  changes: TreeChange[];
  message: string;
  author: GitIdentity;
  committer: GitIdentity;
}

/**
 * A compare-and-swap on a ref failed: it no longer held the value the write started from (a concurrent push
 * or API write won), or it already existed when it had to be new.
 */
export class RefChangedError extends Error {
  constructor(readonly ref: string) {
    super(`${ref} changed while the write was being made`);
    this.name = 'RefChangedError';
  }
}

/** The zero id, which `update-ref` reads as "this ref must not exist yet". */
const MUST_NOT_EXIST = '';

function identityEnvironment(author: GitIdentity, committer: GitIdentity): Record<string, string> {
  return {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_AUTHOR_DATE: `@${author.whenUnix} +0000`,
    GIT_COMMITTER_NAME: committer.name,
    GIT_COMMITTER_EMAIL: committer.email,
    GIT_COMMITTER_DATE: `@${committer.whenUnix} +0000`,
  };
}

/**
 * Writes into bare repositories with plumbing only, never a work tree: blobs (`hash-object -w`), a tree built
 * in a temporary index file (`read-tree`, `update-index --index-info`, `write-tree`), the commit
 * (`commit-tree`), and refs moved with compare-and-swap (`update-ref <ref> <new> <old>`), so that of two
 * concurrent writers exactly one wins. Objects written by a loser are unreachable and go with the next gc.
 */
@Injectable()
export class GitWrites {
  constructor(
    private readonly git: GitCommand,
    private readonly paths: RepositoryPaths,
  ) {}

  /**
   * Builds the commit and returns its id; no ref moves. The temporary index lives outside the repository (a
   * crash must leave nothing inside it that its size would count).
   */
  async commit(dir: string, spec: CommitSpec): Promise<string> {
    await fs.mkdir(this.paths.gitIndexes(), { recursive: true });
    const indexFile = path.join(this.paths.gitIndexes(), `anvil-index-${randomBytes(8).toString('hex')}`);
    const env = { GIT_INDEX_FILE: indexFile };
    try {
      if (spec.parent) await this.git.run(['read-tree', spec.parent], { gitDir: dir, env });
      else await this.git.run(['read-tree', '--empty'], { gitDir: dir, env });
      const lines: string[] = [];
      // `--index-info` removes a path given mode 0 and the zero id (of the repository's hash length).
      const zero = '0'.repeat(spec.parent?.length ?? 40);
      for (const change of spec.changes) {
        if ('remove' in change) {
          lines.push(`0 ${zero}\t${change.path}\0`);
          continue;
        }
        const oid = (await this.git.run(['hash-object', '-w', '--stdin'], { gitDir: dir, input: change.content })).trim();
        lines.push(`${change.executable ? '100755' : '100644'} ${oid}\t${change.path}\0`);
      }
      if (lines.length > 0) await this.git.run(['update-index', '-z', '--index-info'], { gitDir: dir, env, input: lines.join('') });
      const tree = (await this.git.run(['write-tree'], { gitDir: dir, env })).trim();
      faultPoint('commit.tree-written');
      const args = ['commit-tree', tree];
      if (spec.parent) args.push('-p', spec.parent);
      // Forgejo ends every message with a newline, as `git commit` does.
      const message = spec.message.endsWith('\n') ? spec.message : `${spec.message}\n`;
      return (await this.git.run(args, { gitDir: dir, input: message, env: identityEnvironment(spec.author, spec.committer) })).trim();
    } finally {
      await fs.rm(indexFile, { force: true });
    }
  }

  /**
   * Moves `ref` to `newOid` only if it still holds `oldOid` (null: only if it does not exist yet); otherwise
   * RefChangedError and nothing changes.
   */
  updateRef(dir: string, ref: string, newOid: string, oldOid: string | null): Promise<void> {
    return compareAndSwapRef(this.git, dir, ref, newOid, oldOid);
  }

  /** Points `ref` at `newOid` whatever it held: for refs only the server writes (`refs/pull/{n}/head`). */
  async setRef(dir: string, ref: string, newOid: string): Promise<void> {
    await this.git.run(['update-ref', '--no-deref', ref, newOid], { gitDir: dir });
  }

  /** Deletes `ref` only if it still holds `oldOid`. */
  async deleteRef(dir: string, ref: string, oldOid: string): Promise<void> {
    try {
      await this.git.run(['update-ref', '--no-deref', '-d', ref, oldOid], { gitDir: dir });
    } catch (error) {
      if (error instanceof GitError && error.exitCode !== null) throw new RefChangedError(ref);
      throw error;
    }
  }
}

export interface NewTag {
  /** The tag name, without `refs/tags/`. */
  name: string;
  /** The commit the tag points at. */
  target: string;
  /** A non-empty message makes an annotated tag object, tagged by `tagger`; otherwise a lightweight tag. */
  message?: string;
  tagger: GitIdentity;
}

/**
 * Creates `refs/tags/<name>` (content API and releases share it). The ref must not exist yet: RefChangedError
 * otherwise. Returns the id the ref holds (the tag object of an annotated tag, else the commit).
 */
export async function createTag(git: GitCommand, dir: string, tag: NewTag): Promise<string> {
  let oid = tag.target;
  const message = tag.message?.trim() ?? '';
  if (message !== '') {
    const who = `${tag.tagger.name.replace(/[<>\n]/g, '')} <${tag.tagger.email.replace(/[<>\n]/g, '')}> ${tag.tagger.whenUnix} +0000`;
    const body = `object ${tag.target}\ntype commit\ntag ${tag.name}\ntagger ${who}\n\n${message}\n`;
    oid = (await git.run(['mktag'], { gitDir: dir, input: body })).trim();
  }
  await compareAndSwapRef(git, dir, `refs/tags/${tag.name}`, oid, null);
  return oid;
}

async function compareAndSwapRef(git: GitCommand, dir: string, ref: string, newOid: string, oldOid: string | null): Promise<void> {
  try {
    await git.run(['update-ref', '--no-deref', ref, newOid, oldOid ?? MUST_NOT_EXIST], { gitDir: dir });
  } catch (error) {
    if (error instanceof GitError && error.exitCode !== null) throw new RefChangedError(ref);
    throw error;
  }
}
