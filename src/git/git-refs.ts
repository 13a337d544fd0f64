import { Injectable } from '@nestjs/common';
import { GitCommand } from './git-command';
import { CommitHeader, GitCommits } from './git-commits';
import { FIELD, RECORD } from './git-format';

/** A ref and what it points at, with the commit it peels to. */
export interface RefInfo {
  /** Full name (`refs/heads/main`). */
  ref: string;
  /** What the ref holds: a commit, or an annotated tag object. */
  oid: string;
  objectType: string;
  /** The commit it peels to. */
  commit: CommitHeader;
  /** Annotated tags only. */
  tag?: { message: string; taggerName: string; taggerEmail: string; taggerDate: string };
}

/** Revisions given by callers: never an option, never a range or revision expression beyond a plain name. */
export function isPlainRevision(revision: string): boolean {
  return revision !== '' && !revision.startsWith('-') && !/[\x00-\x20\x7f~^:?*[\\]|\.\.|@\{/.test(revision);
}

/**
 * Reading refs with plumbing: what a revision names, what refs peel to, the refs under a prefix. Every call goes
 * through GitCommand (time limit, clean environment); callers hold a process slot around them.
 */
@Injectable()
export class GitRefs {
  constructor(
    private readonly git: GitCommand,
    private readonly history: GitCommits,
  ) {}

  /** The commit `revision` names (branch, tag, full or short id), or null. */
  async resolveCommit(dir: string, revision: string): Promise<string | null> {
    if (!isPlainRevision(revision)) return null;
    const result = await this.git.probe(['rev-parse', '--verify', '--quiet', '--end-of-options', `${revision}^{commit}`], { gitDir: dir });
    return result.exitCode === 0 ? result.stdout.trim() : null;
  }

  /**
   * The commits that the given full ref names peel to, for those that exist, in one call (refs that name
   * trees or blobs are left out).
   */
  async peelRefs(dir: string, refs: string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    if (refs.length === 0) return found;
    const output = await this.git.run(
      ['for-each-ref', `--format=%(refname)${FIELD}%(objecttype)${FIELD}%(objectname)${FIELD}%(*objecttype)${FIELD}%(*objectname)`, ...refs],
      { gitDir: dir },
    );
    const wanted = new Set(refs);
    for (const line of output.split('\n')) {
      const [ref, type, oid, peeledType, peeled] = line.split(FIELD);
      if (!wanted.has(ref)) continue;
      if (type === 'commit') found.set(ref, oid);
      else if (type === 'tag' && peeledType === 'commit') found.set(ref, peeled);
    }
    return found;
  }

  /** RefLookup.peelFirst, with one command for all the refs. */
  async peelFirst(dir: string, refs: string[]): Promise<{ ref: string; commit: string } | null> {
    const found = await this.peelRefs(dir, refs);
    const ref = refs.find((name) => found.has(name));
    return ref === undefined ? null : { ref, commit: found.get(ref)! };
  }

  /** Refs under `prefix` (`refs/heads/`, `refs/tags/`), with the commit each peels to, in one call. */
  async refs(dir: string, prefix: string, sort = 'refname'): Promise<RefInfo[]> {
    const fields = [
      '%(refname)',
      '%(objectname)',
      '%(objecttype)',
      '%(*objectname)',
      '%(contents)',
      '%(taggername)',
      '%(taggeremail:trim)',
      '%(taggerdate:iso-strict)',
    ];
    const output = await this.git.run(['for-each-ref', `--sort=${sort}`, `--format=${RECORD}${fields.join(FIELD)}`, prefix], { gitDir: dir });
    const rows = output
      .split(RECORD)
      .filter((row) => row !== '')
      .map((row) => row.split(FIELD));
    const commitIds = rows.map(([, oid, type, peeled]) => (type === 'tag' ? peeled : oid));
    const commits = await this.history.commits(
      dir,
      commitIds.filter((oid) => oid !== ''),
    );
    const result: RefInfo[] = [];
    rows.forEach(([ref, oid, objectType, , contents, taggerName, taggerEmail, taggerDate], index) => {
      const commit = commits.get(commitIds[index]);
      // Tags of trees or blobs have no commit to show.
      if (!commit) return;
      const info: RefInfo = { ref, oid, objectType, commit };
      if (objectType === 'tag') info.tag = { message: contents, taggerName, taggerEmail, taggerDate: taggerDate.trim() };
      result.push(info);
    });
    return result;
  }
}
