import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AppConfig } from '../config/config';
import { GitCommand } from './git-command';
import { GitLauncher } from './git-launcher';
import { GitEntryBudgetError, GitTreeBudget } from './git-tree-budget';
import { treeEntries, treeShape } from './git-tree-format';

describe('GitTreeBudget: how many paths a tree expands to, over its distinct trees', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-tree-budget-'));
  const launcher = new GitLauncher();
  const config = { dataDir, git: { treeMaxEntries: 1000 } } as AppConfig;
  const git = new GitCommand(config, config.git, launcher);
  const dir = path.join(dataDir, 'r.git');
  const env = { GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com' };

  /** `levels` levels of trees, each naming the one below `width` times, over one blob: width^levels files. */
  async function bomb(levels: number, width: number): Promise<{ tree: string; commit: string }> {
    const blob = (await git.run(['hash-object', '-w', '--stdin'], { gitDir: dir, input: 'x\n' })).trim();
    let entries = Array.from({ length: width }, (_, index) => `100644 blob ${blob}\tf${index}`);
    let tree = '';
    for (let level = 0; level < levels; level += 1) {
      tree = (await git.run(['mktree'], { gitDir: dir, input: `${entries.join('\n')}\n` })).trim();
      entries = Array.from({ length: width }, (_, index) => `040000 tree ${tree}\td${index}`);
    }
    const commit = (await git.run(['commit-tree', '-m', 'bomb', tree], { gitDir: dir, env })).trim();
    return { tree, commit };
  }

  beforeAll(async () => {
    await git.run(['init', '--bare', '--quiet', dir]);
  });

  afterAll(() => {
    launcher.onApplicationShutdown();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('counts files and directories at every depth, each distinct tree read once', async () => {
    const budget = new GitTreeBudget(git, config.git);
    // 3 levels of 4: 4^3 files, 4 + 4^2 directories.
    const small = await bomb(3, 4);
    expect(await budget.firstOver(dir, [small.commit], 84)).toBeNull();
    expect(await budget.firstOver(dir, [small.commit], 83)).toBe(small.tree);
  });

  it("counts trees named as trees (a push's commits' trees) as it counts commits", async () => {
    const budget = new GitTreeBudget(git, config.git);
    const small = await bomb(2, 5);
    // 5^2 files and 5 directories; the tree is given as a tree, with no commit, and the commit's own name alone.
    expect(await budget.firstOver(dir, [], 30, {}, [small.tree])).toBeNull();
    expect(await budget.firstOver(dir, [], 29, {}, [small.tree])).toBe(small.tree);
    expect(await budget.firstOver(dir, [small.commit], 29, {}, [small.tree])).toBe(small.tree);
  });

  it("reads a raw tree's entry count and subtrees as its full listing has them", async () => {
    const inner = await bomb(1, 3);
    const blob = (await git.run(['hash-object', '-w', '--stdin'], { gitDir: dir, input: 'z\n' })).trim();
    const listing = [
      `100644 blob ${blob}\ta file`,
      `040000 tree ${inner.tree}\tdir one`,
      `100755 blob ${blob}\trun`,
      `120000 blob ${blob}\tlink`,
      `040000 tree ${inner.tree}\tdir two`,
    ];
    const tree = (await git.run(['mktree'], { gitDir: dir, input: `${listing.join('\n')}\n` })).trim();
    const raw = await git.runBuffer(['cat-file', 'tree', tree], { gitDir: dir });
    const full = treeEntries(raw, 20, Infinity);
    expect(treeShape(raw, 20)).toEqual({ entries: full.length, subtrees: full.filter((entry) => entry.mode === '40000').map((entry) => entry.oid) });
    expect(treeShape(raw, 20)).toEqual({ entries: 5, subtrees: [inner.tree, inner.tree] });
    // A cut object gives what it holds whole.
    expect(treeShape(raw.subarray(0, raw.length - 3), 20).entries).toBe(4);
  });

  it('refuses a tree of 10 levels of 10 entries (10^10 paths) by reading its 10 trees', async () => {
    const budget = new GitTreeBudget(git, config.git);
    const big = await bomb(10, 10);
    await expect(budget.assertWithin(dir, [big.commit])).rejects.toBeInstanceOf(GitEntryBudgetError);
    await expect(budget.assertWithin(dir, [big.commit])).rejects.toThrow(/more than 1000 files and directories/);
    // Names that are no tree-ish (a blob, an unknown id) are skipped.
    const blob = (await git.run(['hash-object', '-w', '--stdin'], { gitDir: dir, input: 'y\n' })).trim();
    await expect(budget.assertWithin(dir, [blob, '0'.repeat(40)])).resolves.toBeUndefined();
  });

  it('judges a push by the trees of the commits no ref reaches, and of what it names itself', async () => {
    const budget = new GitTreeBudget(git, config.git);
    // 2^1 + 0 paths under a ref; 2^2 files and 2 directories in the commit pushed on top of it.
    const first = await bomb(1, 2);
    await git.run(['update-ref', 'refs/heads/main', first.commit], { gitDir: dir });
    const second = await bomb(2, 2);
    const pushed = (await git.run(['commit-tree', '-p', first.commit, '-m', 'on top', second.tree], { gitDir: dir, env })).trim();
    expect(await budget.firstOverPushed(dir, [pushed], 6)).toBeNull();
    expect(await budget.firstOverPushed(dir, [pushed], 5)).toBe(second.tree);
    // A commit every ref already reaches brings no commits, and its own tree is judged; so is a pushed tree.
    expect(await budget.firstOverPushed(dir, [first.commit], 2)).toBeNull();
    expect(await budget.firstOverPushed(dir, [first.commit], 1)).toBe(first.tree);
    expect(await budget.firstOverPushed(dir, [second.tree], 5)).toBe(second.tree);
    expect(await budget.firstOverPushed(dir, [], 0)).toBeNull();
  });

  it('walks no history for commits on top of the refs a push moves, and walks it for any other', async () => {
    const budget = new GitTreeBudget(git, config.git);
    const walks = jest.spyOn(git, 'stream');
    try {
      const base = await bomb(1, 2);
      await git.run(['update-ref', 'refs/heads/onto', base.commit], { gitDir: dir });
      // On top of the ref's value, a commit whose own tree is a bomb: judged without a walk, and refused.
      const big = await bomb(3, 3);
      const onTop = (await git.run(['commit-tree', '-p', base.commit, '-m', 'on top', big.tree], { gitDir: dir, env })).trim();
      const onto = [{ ref: 'refs/heads/onto', oldId: base.commit }];
      expect(await budget.firstOverPushed(dir, [onTop], 38, {}, onto)).toBe(big.tree);
      expect(await budget.firstOverPushed(dir, [onTop], 39, {}, onto)).toBeNull();
      expect(walks).not.toHaveBeenCalled();
      // A merge of the ref's value with a new commit that holds the bomb, under a small tree: the new parent is
      // not a ref's value, so the history is walked, and the bomb found.
      const hidden = (await git.run(['commit-tree', '-m', 'hidden', big.tree], { gitDir: dir, env })).trim();
      const merge = (await git.run(['commit-tree', '-p', base.commit, '-p', hidden, '-m', 'merge', base.tree], { gitDir: dir, env })).trim();
      expect(await budget.firstOverPushed(dir, [merge], 38, {}, onto)).toBe(big.tree);
      expect(walks).toHaveBeenCalledTimes(1);
      // A client's old value that its ref does not have (git would refuse the update, after pre-receive, but the
      // objects would stay): the commit it claims is walked, and its bomb found, under a small tree on top of it.
      const claimed = (await git.run(['commit-tree', '-p', hidden, '-m', 'claimed', base.tree], { gitDir: dir, env })).trim();
      expect(await budget.firstOverPushed(dir, [claimed], 38, {}, [{ ref: 'refs/heads/onto', oldId: hidden }])).toBe(big.tree);
      expect(walks).toHaveBeenCalledTimes(2);
      // A creation (no old value) and a pushed tree are walked too.
      expect(await budget.firstOverPushed(dir, [onTop], 38, {}, [{ ref: 'refs/heads/new', oldId: '0'.repeat(40) }])).toBe(big.tree);
      expect(await budget.firstOverPushed(dir, [big.tree], 38, {}, onto)).toBe(big.tree);
      expect(walks).toHaveBeenCalledTimes(4);
    } finally {
      walks.mockRestore();
    }
  });

  it('judges a long history whose trees come while git still walks it, each distinct tree read once', async () => {
    const budget = new GitTreeBudget(git, config.git);
    // 3 000 commits in a row, each with its own tree of one file and one shared directory of 2 files: the trees
    // come in many chunks of rev-list's output and fill more than one batch of reads.
    const shared = await bomb(1, 2);
    const blob = (await git.run(['hash-object', '-w', '--stdin'], { gitDir: dir, input: 'w\n' })).trim();
    let input = '';
    for (let index = 1; index <= 3000; index++) {
      input += `commit refs/heads/long\nmark :${index}\ncommitter A <a@example.com> ${1_700_000_000 + index} +0000\ndata 1\nc\n`;
      if (index > 1) input += `from :${index - 1}\n`;
      input += `M 100644 ${blob} file-${index}\nM 040000 ${shared.tree} shared\n\n`;
    }
    await git.run(['fast-import', '--quiet'], { gitDir: dir, input });
    const tip = (await git.run(['rev-parse', 'refs/heads/long'], { gitDir: dir })).trim();
    await git.run(['update-ref', '-d', 'refs/heads/long'], { gitDir: dir });
    // The last commit's tree: 3 000 files, the directory and its 2 files.
    expect(await budget.firstOverPushed(dir, [tip], 3003)).toBeNull();
    const last = (await git.run(['rev-parse', `${tip}^{tree}`], { gitDir: dir })).trim();
    expect(await budget.firstOverPushed(dir, [tip], 3002)).toBe(last);
    expect(await budget.count(dir, `${tip}~2999`)).toBe(4);
  });

  it('judges a push of loose objects on top of its refs without starting git, as git judges it', async () => {
    const base = await bomb(1, 2);
    await git.run(['update-ref', 'refs/heads/loose', base.commit], { gitDir: dir });
    const big = await bomb(3, 3);
    const onTop = (await git.run(['commit-tree', '-p', base.commit, '-m', 'on top', big.tree], { gitDir: dir, env })).trim();
    const onto = [{ ref: 'refs/heads/loose', oldId: base.commit }];
    // Everything the commits above wrote is loose in the repository's own object directory: a quarantine's shape.
    const loose = { GIT_OBJECT_DIRECTORY: path.join(dir, 'objects') };
    const budget = new GitTreeBudget(git, config.git);
    const started = jest.spyOn(git, 'startSession');
    try {
      expect(await budget.firstOverPushed(dir, [onTop], 38, loose, onto)).toBe(big.tree);
      expect(await budget.firstOverPushed(dir, [onTop], 39, loose, onto)).toBeNull();
      // The ref's value read from packed-refs as well.
      await git.run(['pack-refs', '--all'], { gitDir: dir });
      expect(await budget.firstOverPushed(dir, [onTop], 38, loose, onto)).toBe(big.tree);
      expect(started).not.toHaveBeenCalled();
      // Git agrees.
      expect(await new GitTreeBudget(git, config.git).firstOverPushed(dir, [onTop], 38, {}, onto)).toBe(big.tree);
      expect(await new GitTreeBudget(git, config.git).firstOverPushed(dir, [onTop], 39, {}, onto)).toBeNull();
    } finally {
      started.mockRestore();
    }
  });

  it('leaves a push to git when a tree it needs is neither among its loose objects nor counted', async () => {
    const base = await bomb(1, 2);
    await git.run(['update-ref', 'refs/heads/partial', base.commit], { gitDir: dir });
    // A quarantine holding only the new commit and its root tree; the root names a subtree the repository has.
    const inner = await bomb(2, 3);
    const blob = (await git.run(['hash-object', '-w', '--stdin'], { gitDir: dir, input: 'p\n' })).trim();
    const root = (await git.run(['mktree'], { gitDir: dir, input: `100644 blob ${blob}\tfile\n040000 tree ${inner.tree}\tdir\n` })).trim();
    const commit = (await git.run(['commit-tree', '-p', base.commit, '-m', 'partial', root], { gitDir: dir, env })).trim();
    const quarantine = fs.mkdtempSync(path.join(dir, 'objects', 'tmp_objdir-incoming-'));
    for (const id of [root, commit]) {
      fs.mkdirSync(path.join(quarantine, id.slice(0, 2)), { recursive: true });
      fs.copyFileSync(path.join(dir, 'objects', id.slice(0, 2), id.slice(2)), path.join(quarantine, id.slice(0, 2), id.slice(2)));
    }
    const objects = { GIT_OBJECT_DIRECTORY: quarantine, GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(dir, 'objects') };
    const moved = [{ ref: 'refs/heads/partial', oldId: base.commit }];
    const budget = new GitTreeBudget(git, config.git);
    const started = jest.spyOn(git, 'startSession');
    try {
      // 2 entries, 3 directories and 9 files under `dir`: 14.
      expect(await budget.firstOverPushed(dir, [commit], 13, objects, moved)).toBe(root);
      expect(started).toHaveBeenCalledTimes(1);
      // The subtree's count is kept now: the same push is judged from its loose objects alone.
      expect(await budget.firstOverPushed(dir, [commit], 14, objects, moved)).toBeNull();
      expect(await budget.firstOverPushed(dir, [commit], 13, objects, moved)).toBe(root);
      expect(started).toHaveBeenCalledTimes(1);
    } finally {
      started.mockRestore();
      fs.rmSync(quarantine, { recursive: true, force: true });
    }
  });

  it('fails, and stops git, when the walk of a push cannot be made', async () => {
    const budget = new GitTreeBudget(git, config.git);
    await expect(budget.firstOverPushed(dir, ['not-a-revision'], 10)).rejects.toThrow(/rev-list/);
  });
});
