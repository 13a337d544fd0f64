import { Injectable } from '@nestjs/common';
import { GitCommand } from './git-command';
import { FIELD, LITERAL, RECORD } from './git-format';
import { GitTreeBudget } from './git-tree-budget';

export interface CommitHeader {
  oid: string;
  tree: string;
  parents: string[];
  authorName: string;
  authorEmail: string;
  /** Strict ISO 8601 with the commit's own offset. */
  authorDate: string;
  committerName: string;
  committerEmail: string;
  committerDate: string;
  message: string;
}

/** What one commit changed against its first parent. */
export interface CommitChange {
  path: string;
  /** A added, M modified, D deleted, T type changed. */
  status: string;
  additions: number;
  deletions: number;
}

export interface CommitWithChanges extends CommitHeader {
  changes: CommitChange[] | null;
}

export interface LogQuery {
  /** Path limiting (`-- path`). */
  path?: string;
  since?: string;
  until?: string;
  skip: number;
  limit: number;
  /** Read the changed files and line counts as well. */
  withChanges: boolean;
}

const COMMIT_FORMAT = `${RECORD}%H${FIELD}%T${FIELD}%P${FIELD}%an${FIELD}%ae${FIELD}%aI${FIELD}%cn${FIELD}%ce${FIELD}%cI${FIELD}%B${FIELD}`;

/**
 * Reading history with plumbing: commit headers, one commit with its changes, pages and counts of a log. Every
 * call goes through GitCommand (time limit, clean environment); callers hold a process slot around them.
 */
@Injectable()
export class GitCommits {
  constructor(
    private readonly git: GitCommand,
    private readonly budget: GitTreeBudget,
  ) {}

  /** The headers of the given commits, read in one call. */
  async commits(dir: string, oids: string[]): Promise<Map<string, CommitHeader>> {
    const unique = [...new Set(oids)];
    if (unique.length === 0) return new Map();
    const output = await this.git.run(['log', '--no-walk=unsorted', '--stdin', `--format=${COMMIT_FORMAT}`], { gitDir: dir, input: unique.join('\n') + '\n' });
    return new Map(parseLog(output, false).map((commit) => [commit.oid, commit]));
  }

  /** One commit with its changes against the first parent. */
  async commit(dir: string, oid: string, withChanges: boolean): Promise<CommitWithChanges | null> {
    const [commit] = await this.log(dir, oid, { skip: 0, limit: 1, withChanges });
    return commit ?? null;
  }

  /** How many commits `log` would walk for this query, in one walk (`rev-list --count`). */
  async count(dir: string, head: string, query: Pick<LogQuery, 'path' | 'since' | 'until'>): Promise<number> {
    const args = ['rev-list', '--count', ...historyFilters(query), head];
    if (query.path) args.push('--', query.path);
    return Number((await this.git.run(args, { gitDir: dir, env: LITERAL })).trim());
  }

  /**
   * A page of history from `head`, newest first, in one call. With the changes of each commit, the trees of the
   * page's commits and of their first parents are measured first (GitTreeBudget): git computes a commit's whole
   * diff before it writes any of it, so only a count made beforehand can refuse a diff of billions of paths.
   */
  async log(dir: string, head: string, query: LogQuery): Promise<CommitWithChanges[]> {
    const page = [`--skip=${query.skip}`, `--max-count=${query.limit}`, ...historyFilters(query), head, ...(query.path ? ['--', query.path] : [])];
    if (query.withChanges) {
      const listed = (await this.git.run(['log', '--format=%H %P', ...page], { gitDir: dir, env: LITERAL })).split(/\s+/);
      await this.budget.assertWithin(
        dir,
        listed.filter((oid) => oid !== ''),
      );
    }
    const args = ['log', `--format=${COMMIT_FORMAT}`];
    if (query.withChanges) args.push('-z', '--no-renames', '--raw', '--numstat', '--diff-merges=first-parent');
    args.push(...page);
    return parseLog(await this.git.run(args, { gitDir: dir, env: LITERAL }), query.withChanges);
  }
}

function historyFilters(query: Pick<LogQuery, 'since' | 'until'>): string[] {
  const filters: string[] = [];
  if (query.since) filters.push(`--since=${query.since}`);
  if (query.until) filters.push(`--until=${query.until}`);
  return filters;
}

/** Parses COMMIT_FORMAT records, each optionally followed by `-z --raw --numstat` output. */
function parseLog(output: string, withChanges: boolean): CommitWithChanges[] {
  return output
    .split(RECORD)
    .filter((record) => record !== '')
    .map((record) => {
      const fields = record.split(FIELD);
      const [oid, tree, parents, authorName, authorEmail, authorDate, committerName, committerEmail, committerDate, message] = fields;
      const rest = fields.slice(10).join(FIELD);
      return {
        oid,
        tree,
        parents: parents === '' ? [] : parents.split(' '),
        authorName,
        authorEmail,
        authorDate,
        committerName,
        committerEmail,
        committerDate,
        message,
        changes: withChanges ? parseChanges(rest) : null,
      };
    });
}

function parseChanges(output: string): CommitChange[] {
  const tokens = output.split('\0').map((token) => token.replace(/^\n/, ''));
  const changes = new Map<string, CommitChange>();
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index];
    if (token.startsWith(':')) {
      const status = token.split(' ').pop() ?? 'M';
      const path = tokens[++index];
      changes.set(path, { path, status: status[0], additions: 0, deletions: 0 });
    } else if (/^(\d+|-)\t(\d+|-)\t/.test(token)) {
      const [additions, deletions, ...pathParts] = token.split('\t');
      const change = changes.get(pathParts.join('\t'));
      if (change) {
        change.additions = additions === '-' ? 0 : Number(additions);
        change.deletions = deletions === '-' ? 0 : Number(deletions);
      }
    }
  }
  return [...changes.values()];
}
