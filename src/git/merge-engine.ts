import { Injectable } from '@nestjs/common';
import { GitCommand, GitError } from './git-command';
import { FIELD, RECORD } from './git-format';
import type { GitIdentity } from './git-writes';
import { DivergingFastForwardError, MergeConflictError, MergeStyle, NothingToMergeError, RebaseConflictError, UnrelatedHistoriesError } from './merge-errors';

/** What `git merge-tree --write-tree` made of two commits: the merged tree, and the paths that conflict. */
export interface TreeMerge {
  tree: string;
  conflicts: string[];
}

/** A merge to prepare in a bare repository: both commits must be in it (a fork's head is fetched first). */
export interface MergePlan {
  style: MergeStyle;
  /** The base branch's tip the merge builds on; the publishing compare-and-swap starts from it. */
  baseTip: string;
  /** The head commit being merged. */
  headTip: string;
  /** The message of the commit the style makes (merge, rebase-merge, squash), as the caller wrote it. */
  message: string;
  /** Author and committer of a merge commit; committer of replayed and squashed commits. */
  merger: GitIdentity;
  /** Author of the squashed commit (the pull request's poster, as the caller chose the signature). */
  squashAuthor?: GitIdentity;
}

export interface MergeResult {
  /** The base branch's new tip: written, reachable from no ref yet. */
  tip: string;
  /** The commits this merge wrote (the replayed ones, then the merge or squash commit), oldest first. */
  written: string[];
}

/** A commit of the head as rebasing replays it. */
interface ReplayedCommit {
  oid: string;
  tree: string;
  parents: string[];
  authorName: string;
  authorEmail: string;
  /** git's raw form, `<seconds> <offset>`: kept exactly, offset included. */
  authorDate: string;
  encoding: string;
  message: Buffer;
}

const REPLAY_FORMAT = `%H${FIELD}%T${FIELD}%P${FIELD}%an${FIELD}%ae${FIELD}%ad${FIELD}%e${FIELD}%B${RECORD}`;

/**
 * Merges pull requests inside the bare repository with plumbing, never a clone or a work tree: what each style
 * makes is built from `merge-tree --write-tree` (the same merge machinery `git merge` uses), `commit-tree` and,
 * to rebase, a replay of each commit of the head onto the base as a cherry-pick would apply it. The commits are
 * the ones `git merge`, `git rebase` and `git commit` make in Forgejo's temporary clone (parents, trees, messages
 * after `git commit`'s clean-up, authors and committers). Nothing here moves a ref: the caller publishes `tip`
 * with one compare-and-swap from `baseTip`; what a lost race leaves is unreachable and goes with the next gc.
 */
@Injectable()
export class GitMerges {
  private mergeBaseOption: Promise<boolean> | null = null;

  constructor(private readonly git: GitCommand) {}

  /**
   * The three-way merge of two commits over their merge base (or over `base`, for a cherry-pick); conflicting
   * paths listed once each. Unrelated histories are an UnrelatedHistoriesError of `style`.
   */
  async mergeTree(dir: string, ours: string, theirs: string, options: { base?: string; style?: MergeStyle } = {}): Promise<TreeMerge> {
    const args = ['merge-tree', '--write-tree', '--name-only', '-z', '--no-messages'];
    let first = ours;
    if (options.base !== undefined) {
      if (await this.supportsMergeBase()) {
        args.push(`--merge-base=${options.base}`);
      } else {
        // Before git 2.40 merge-tree picks the merge base itself: a stand-in for `ours` made on `base` (same
        // tree, `base` its only parent) has `base` as its one best common ancestor with `theirs`, a child of it.
        const tree = (await this.git.run(['rev-parse', '--verify', '--end-of-options', `${ours}^{tree}`], { gitDir: dir })).trim();
        first = (await this.git.run(['commit-tree', tree, '-p', options.base], { gitDir: dir, input: 'merge base stand-in\n', env: STAND_IN_IDENTITY })).trim();
      }
    }
    args.push('--end-of-options', first, theirs);
    const result = await this.git.probe(args, { gitDir: dir });
    if (result.exitCode !== 0 && result.exitCode !== 1) {
      if (/unrelated histories/.test(result.stderr)) throw new UnrelatedHistoriesError(options.style ?? 'merge');
      throw new GitError(args, result.exitCode, result.stderr);
    }
    const [tree, ...paths] = result.stdout.split('\0');
    return { tree: tree.trim(), conflicts: result.exitCode === 1 ? paths.filter((item) => item !== '') : [] };
  }

  /** Builds what `plan.style` merges into the base and returns the new tip; no ref moves. */
  async prepare(dir: string, plan: MergePlan): Promise<MergeResult> {
    switch (plan.style) {
      case 'merge':
        return this.mergeCommit(dir, plan, plan.headTip, []);
      case 'squash':
        return this.squash(dir, plan);
      case 'fast-forward-only':
        return this.fastForward(dir, plan);
      case 'rebase': {
        const rebased = await this.rebase(dir, plan);
        if (rebased.tip === plan.baseTip) throw new NothingToMergeError(plan.style);
        return rebased;
      }
      case 'rebase-merge': {
        const rebased = await this.rebase(dir, plan);
        return this.mergeCommit(dir, plan, rebased.tip, rebased.written);
      }
    }
  }

  /**
   * The commits of the head that rebasing onto the base replays, oldest first, as `git rebase` picks them:
   * merges left out, and commits whose change the base already has (same patch id) dropped.
   */
  async commitsToReplay(dir: string, baseTip: string, headTip: string): Promise<string[]> {
    const out = await this.git.run(['rev-list', '--reverse', '--topo-order', '--right-only', '--cherry-pick', '--no-merges', `${baseTip}...${headTip}`], {
      gitDir: dir,
    });
    return out.split('\n').filter((line) => line !== '');
  }

  /** Authors of the commits the head has and the base lacks, newest first, each address once. */
  async authors(dir: string, baseTip: string, headTip: string): Promise<{ name: string; email: string }[]> {
    const out = await this.git.run(['log', `--format=%an${FIELD}%ae`, headTip, `^${baseTip}`, '--'], { gitDir: dir });
    const seen = new Set<string>();
    const result: { name: string; email: string }[] = [];
    for (const line of out.split('\n')) {
      if (line === '') continue;
      const [name, email] = line.split(FIELD);
      if (seen.has(email)) continue;
      seen.add(email);
      result.push({ name, email });
    }
    return result;
  }

  /** Whether `ancestor` is reachable from `descendant` (a commit is its own ancestor). */
  async isAncestor(dir: string, ancestor: string, descendant: string): Promise<boolean> {
    const result = await this.git.probe(['merge-base', '--is-ancestor', ancestor, descendant], { gitDir: dir });
    if (result.exitCode === 0) return true;
    if (result.exitCode === 1) return false;
    throw new GitError(['merge-base'], result.exitCode, result.stderr);
  }

  /**
   * `git merge --no-ff --no-commit <theirs>` then `git commit -m`: two parents, base first, the merged tree,
   * author and committer the merger. A head the base already contains is "Already up to date": no commit.
   */
  private async mergeCommit(dir: string, plan: MergePlan, theirs: string, written: string[]): Promise<MergeResult> {
    if (await this.isAncestor(dir, theirs, plan.baseTip)) throw new NothingToMergeError(plan.style);
    const merged = await this.mergeTree(dir, plan.baseTip, theirs, { style: plan.style });
    if (merged.conflicts.length > 0) throw new MergeConflictError(plan.style, merged.conflicts);
    const tip = await this.commitTree(dir, merged.tree, [plan.baseTip, theirs], commitMessage(plan.message), plan.merger, plan.merger);
    return { tip, written: [...written, tip] };
  }

  /**
   * `git merge --squash` then `git commit --author`: one parent, the merged tree, the chosen author (dated now)
   * and the merger as committer. A merge that changes nothing is "nothing to commit".
   */
  private async squash(dir: string, plan: MergePlan): Promise<MergeResult> {
    if (await this.isAncestor(dir, plan.headTip, plan.baseTip)) throw new NothingToMergeError(plan.style);
    const merged = await this.mergeTree(dir, plan.baseTip, plan.headTip, { style: plan.style });
    if (merged.conflicts.length > 0) throw new MergeConflictError(plan.style, merged.conflicts);
    const baseTree = await this.treeOf(dir, plan.baseTip);
    if (merged.tree === baseTree) throw new NothingToMergeError(plan.style);
    const author = plan.squashAuthor ?? plan.merger;
    const tip = await this.commitTree(
      dir,
      merged.tree,
      [plan.baseTip],
      commitMessage(plan.message),
      { ...author, whenUnix: plan.merger.whenUnix },
      plan.merger,
    );
    return { tip, written: [tip] };
  }

  /** `git merge --ff-only`: the head itself when it contains the base. */
  private async fastForward(dir: string, plan: MergePlan): Promise<MergeResult> {
    if (plan.headTip === plan.baseTip || (await this.isAncestor(dir, plan.headTip, plan.baseTip))) throw new NothingToMergeError(plan.style);
    if (!(await this.isAncestor(dir, plan.baseTip, plan.headTip))) throw new DivergingFastForwardError();
    return { tip: plan.headTip, written: [] };
  }

  /**
   * `git rebase <base>` of the head: nothing to do when the head already contains the base; otherwise each
   * commit to replay is cherry-picked onto the tip so far (its own parent the merge base), keeping its author,
   * date and message byte for byte, with the merger as committer. A commit that becomes empty is dropped, one
   * that was empty from the start kept, as git does by default.
   */
  private async rebase(dir: string, plan: MergePlan): Promise<MergeResult> {
    if (await this.isAncestor(dir, plan.baseTip, plan.headTip)) return { tip: plan.headTip, written: [] };
    const oids = await this.commitsToReplay(dir, plan.baseTip, plan.headTip);
    const commits = await this.readCommits(dir, oids);
    const parentTrees = await this.trees(
      dir,
      commits.map((commit) => commit.parents[0]).filter((oid): oid is string => oid !== undefined),
    );
    let tip = plan.baseTip;
    let tipTree = await this.treeOf(dir, tip);
    const written: string[] = [];
    for (const commit of commits) {
      const parent = commit.parents[0];
      if (parent === undefined) throw new UnrelatedHistoriesError(plan.style);
      const merged = await this.mergeTree(dir, tip, commit.oid, { base: parent, style: plan.style });
      if (merged.conflicts.length > 0) throw new RebaseConflictError(plan.style, commit.oid, merged.conflicts);
      const startedEmpty = commit.tree === parentTrees.get(parent);
      if (merged.tree === tipTree && !startedEmpty) continue;
      const author = { name: commit.authorName, email: commit.authorEmail, date: commit.authorDate };
      tip = await this.commitTree(dir, merged.tree, [tip], commit.message, author, plan.merger, commit.encoding);
      tipTree = merged.tree;
      written.push(tip);
    }
    return { tip, written };
  }

  private async readCommits(dir: string, oids: string[]): Promise<ReplayedCommit[]> {
    if (oids.length === 0) return [];
    // Raw bytes and no re-encoding: the message is replayed exactly as it is stored.
    const out = await this.git.runBuffer(['log', '--no-walk=unsorted', '--stdin', '--encoding=none', '--date=raw', `--format=${REPLAY_FORMAT}`], {
      gitDir: dir,
      input: oids.join('\n') + '\n',
    });
    const commits: ReplayedCommit[] = [];
    let start = 0;
    const record = RECORD.charCodeAt(0);
    const field = FIELD.charCodeAt(0);
    while (start < out.length) {
      const end = out.indexOf(record, start);
      if (end < 0) break;
      const fields: Buffer[] = [];
      let at = start;
      for (let index = 0; index < 7; index++) {
        const next = out.indexOf(field, at);
        fields.push(out.subarray(at, next));
        at = next + 1;
      }
      const [oid, tree, parents, authorName, authorEmail, authorDate, encoding] = fields.map((bytes) => bytes.toString('utf8'));
      commits.push({
        // `git log` puts a newline between records.
        oid: oid.replace(/^\n/, ''),
        tree,
        parents: parents === '' ? [] : parents.split(' '),
        authorName,
        authorEmail,
        authorDate,
        encoding,
        message: Buffer.from(out.subarray(at, end)),
      });
      start = end + 1;
    }
    return commits;
  }

  private async treeOf(dir: string, commit: string): Promise<string> {
    return (await this.git.run(['rev-parse', '--verify', '--end-of-options', `${commit}^{tree}`], { gitDir: dir })).trim();
  }

  private async trees(dir: string, commits: string[]): Promise<Map<string, string>> {
    const unique = [...new Set(commits)];
    if (unique.length === 0) return new Map();
    // Ids read from git, never options; without --verify, rev-parse would echo `--end-of-options` as a line.
    const out = (await this.git.run(['rev-parse', ...unique.map((oid) => `${oid}^{tree}`)], { gitDir: dir })).trim().split('\n');
    return new Map(unique.map((oid, index) => [oid, out[index]]));
  }

  private async commitTree(
    dir: string,
    tree: string,
    parents: string[],
    message: string | Buffer,
    author: GitIdentity | { name: string; email: string; date: string },
    committer: GitIdentity,
    encoding = '',
  ): Promise<string> {
    const args = encoding === '' ? [] : ['-c', `i18n.commitEncoding=${encoding}`];
    args.push('commit-tree', tree, ...parents.flatMap((parent) => ['-p', parent]));
    const env = {
      GIT_AUTHOR_NAME: author.name,
      GIT_AUTHOR_EMAIL: author.email,
      GIT_AUTHOR_DATE: 'date' in author ? author.date : `@${author.whenUnix} +0000`,
      GIT_COMMITTER_NAME: committer.name,
      GIT_COMMITTER_EMAIL: committer.email,
      GIT_COMMITTER_DATE: `@${committer.whenUnix} +0000`,
    };
    return (await this.git.run(args, { gitDir: dir, input: message, env })).trim();
  }

  private supportsMergeBase(): Promise<boolean> {
    this.mergeBaseOption ??= this.git.run(['version']).then((out) => {
      const [major, minor] = (/(\d+)\.(\d+)/.exec(out) ?? ['', '0', '0']).slice(1).map(Number);
      return major > 2 || (major === 2 && minor >= 40);
    });
    return this.mergeBaseOption;
  }
}

/** The identity of the stand-in commits of `mergeTree` (never reachable, never shown). */
const STAND_IN_IDENTITY = {
  GIT_AUTHOR_NAME: 'Anvil',
  GIT_AUTHOR_EMAIL: 'anvil@localhost',
  GIT_AUTHOR_DATE: '@0 +0000',
  GIT_COMMITTER_NAME: 'Anvil',
  GIT_COMMITTER_EMAIL: 'anvil@localhost',
  GIT_COMMITTER_DATE: '@0 +0000',
};

/**
 * The message as `git commit -m` stores it (its "whitespace" clean-up): trailing blanks cut from every line,
 * blank lines at either end dropped and runs of them made one, a final newline. Empty when nothing is left.
 */
export function commitMessage(text: string): string {
  const lines = text
    .replace(/\0/g, '')
    .split('\n')
    .map((line) => line.replace(/\s+$/, ''));
  const kept: string[] = [];
  for (const line of lines) {
    if (line === '' && (kept.length === 0 || kept[kept.length - 1] === '')) continue;
    kept.push(line);
  }
  while (kept.length > 0 && kept[kept.length - 1] === '') kept.pop();
  return kept.length === 0 ? '' : `${kept.join('\n')}\n`;
}
