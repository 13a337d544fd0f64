import * as fs from 'node:fs';
import * as path from 'node:path';
import { SshEndpoint } from '../../src/common/ssh-endpoint';
import { GitProcesses } from '../../src/git/git-processes';
import { makeRepo, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { git, repositoryDir } from '../support/git';
import { GitClient, withCredentials } from '../support/git-client';
import { generateSshKey, sshCommand } from '../support/ssh-keys';
import { startTestApp, TestApp, WITH_SSH } from '../support/test-app';
import { recordFigures } from './figures';

/**
 * A tree whose few objects name billions of paths. Pushes of one are refused (HTTP and
 * SSH), and when one is in a repository anyway (planted on disk, as an older server let it in), listings, the
 * last-commit walk and diff stats answer 422 from a count of its distinct trees, before any git walks it: the
 * assertions are the statuses and that no git process of the repository is left, never how long it took.
 */

/** A commit whose tree is 10 levels of 10 entries, each level naming the one below 10 times: 10^10 paths. */
async function treeBomb(client: GitClient, work: string): Promise<string> {
  const blob = (await client.run(['hash-object', '-w', '--stdin'], { cwd: work, input: 'x\n' })).stdout.trim();
  let entries = Array.from({ length: 10 }, (_, index) => `100644 blob ${blob}\tf${index}`);
  let tree = '';
  for (let level = 0; level < 10; level += 1) {
    tree = (await client.run(['mktree'], { cwd: work, input: `${entries.join('\n')}\n` })).stdout.trim();
    entries = Array.from({ length: 10 }, (_, index) => `040000 tree ${tree}\td${index}`);
  }
  return (await client.ok(['commit-tree', '-m', 'bomb', tree], { cwd: work })).trim();
}

/** Pids of the git processes walking the repository directory `dir`. */
function gitProcessesOn(dir: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const state = fs.readFileSync(`/proc/${entry}/status`, 'utf8');
      // The repository's pooled object reader (`cat-file --batch-command`) stays until its idle time by design:
      // it reads single objects, each within a time limit. Any other git is a walk.
      const walk = !args.includes('--batch-command');
      if (walk && args.some((arg) => path.basename(arg) === 'git') && args.some((arg) => arg.includes(dir)) && !/State:\s+Z/.test(state))
        found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** Polls (no fixed sleeps) until `probe` gives what `done` wants; fails after `attempts` tries 100 ms apart. */
async function eventually<T>(probe: () => T, done: (value: T) => boolean, attempts = 300): Promise<T> {
  let value = probe();
  for (let attempt = 0; attempt < attempts && !done(value); attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = probe();
  }
  if (!done(value)) throw new Error(`condition never held (last value: ${JSON.stringify(value)})`);
  return value;
}

describe('entry budgets for trees (H2)', () => {
  let t: TestApp;
  let base: string;
  let client: GitClient;
  let alice: TestUser;
  let keyCommand: string;
  let sshPort: number;

  beforeAll(async () => {
    // GIT_MAX_TREE_ENTRIES at its default (1 000 000).
    t = await startTestApp(WITH_SSH);
    base = await t.listen();
    client = new GitClient();
    alice = await makeUser(t);
    const key = generateSshKey(client.home, 'alice');
    expect((await t.http.post(t.api('/user/keys')).set(withToken(alice.token)).send({ title: 'k', key: key.publicLine })).status).toBe(201);
    keyCommand = sshCommand(key.privateKey);
    sshPort = t.app.get(SshEndpoint).port;
  });

  afterAll(async () => {
    client.dispose();
    await t.close();
  });

  it('refuses a push of a tree of 10^10 paths over HTTP and over SSH, naming the limit, and keeps nothing of it', async () => {
    const name = uniqueName('bomb-push');
    await makeRepo(t, alice, { name, autoInit: true });
    const work = await client.workingCopy('main');
    const commit = await treeBomb(client, work);
    const overHttp = await client.run(['push', withCredentials(base, `${alice.name}/${name}.git`, alice.name, alice.password), `${commit}:refs/heads/bomb`], {
      cwd: work,
    });
    const overSsh = await client.run(['push', `ssh://git@127.0.0.1:${sshPort}/${alice.name}/${name}.git`, `${commit}:refs/heads/bomb-ssh`], {
      cwd: work,
      env: { GIT_SSH_COMMAND: keyCommand },
    });
    recordFigures('tree bomb push', { http: overHttp.code, ssh: overSsh.code });
    for (const outcome of [overHttp, overSsh]) {
      expect(outcome.code).not.toBe(0);
      expect(outcome.stderr).toMatch(/more than 1000000 files and directories/);
      expect(outcome.stderr).toMatch(/pre-receive hook declined/);
    }
    for (const branch of ['bomb', 'bomb-ssh']) expect((await t.http.get(t.api(`/repos/${alice.name}/${name}/branches/${branch}`))).status).toBe(404);
    // An ordinary push still passes the same rule.
    const ordinary = await client.workingCopy('main');
    fs.writeFileSync(path.join(ordinary, 'a.txt'), 'a\n');
    await client.ok(['add', 'a.txt'], { cwd: ordinary });
    await client.ok(['commit', '--quiet', '-m', 'a'], { cwd: ordinary });
    const fine = await client.run(['push', `ssh://git@127.0.0.1:${sshPort}/${alice.name}/${name}.git`, 'HEAD:refs/heads/fine'], {
      cwd: ordinary,
      env: { GIT_SSH_COMMAND: keyCommand },
    });
    expect(fine.code).toBe(0);
  });

  it('refuses such a tree anywhere in the history a push brings, under a small tip or in a merge', async () => {
    const name = uniqueName('bomb-history');
    await makeRepo(t, alice, { name, autoInit: true });
    const remote = withCredentials(base, `${alice.name}/${name}.git`, alice.name, alice.password);
    const work = await client.workingCopy('main');
    await client.ok(['fetch', '--quiet', remote, 'main'], { cwd: work });
    const main = (await client.ok(['rev-parse', 'FETCH_HEAD'], { cwd: work })).trim();
    const small = (await client.ok(['rev-parse', `${main}^{tree}`], { cwd: work })).trim();
    const bomb = await treeBomb(client, work);
    // A new branch whose tip has a small tree over the bomb; an update of main by a merge that brings it.
    const onBomb = (await client.ok(['commit-tree', '-p', bomb, '-m', 'small on top', small], { cwd: work })).trim();
    const merge = (await client.ok(['commit-tree', '-p', main, '-p', bomb, '-m', 'merge', small], { cwd: work })).trim();
    const overSsh = { remote: `ssh://git@127.0.0.1:${sshPort}/${alice.name}/${name}.git`, env: { GIT_SSH_COMMAND: keyCommand } };
    for (const [refspec, via] of [
      [`${onBomb}:refs/heads/hidden`, { remote, env: {} }],
      [`${merge}:refs/heads/main`, { remote, env: {} }],
      [`${merge}:refs/heads/main`, overSsh],
    ] as const) {
      const outcome = await client.run(['push', via.remote, refspec], { cwd: work, env: via.env });
      expect(outcome.code).not.toBe(0);
      expect(outcome.stderr).toMatch(/more than 1000000 files and directories/);
    }
    expect((await t.http.get(t.api(`/repos/${alice.name}/${name}/branches/hidden`))).status).toBe(404);
    expect((await t.http.get(t.api(`/repos/${alice.name}/${name}/branches/main`))).body.commit.id).toBe(main);
  });

  it('answers listings, last commits, history with stats and the archive of such a tree at once, leaving no git running', async () => {
    const name = uniqueName('bomb');
    await makeRepo(t, alice, { name, autoInit: true });
    const dir = repositoryDir(t.dataDir, alice.name, name);
    const work = await client.workingCopy('main');
    const commit = await treeBomb(client, work);
    // Planted on disk past the hooks, as a server without the push rule would have let it in.
    await client.ok(['push', '--quiet', '--force', dir, `${commit}:refs/heads/main`], { cwd: work });
    expect(git(dir, 'rev-parse', 'refs/heads/main').trim()).toBe(commit);
    const repo = `${alice.name}/${name}`;
    const answers = {
      listing: await t.http.get(t.api(`/repos/${repo}/contents`)),
      subdirectory: await t.http.get(t.api(`/repos/${repo}/contents/d0`)),
      history: await t.http.get(t.api(`/repos/${repo}/commits?stat=true`)),
      commit: await t.http.get(t.api(`/repos/${repo}/git/commits/${commit}?stat=true`)),
      archive: await t.http.get(t.api(`/repos/${repo}/archive/main.zip`)),
    };
    recordFigures('tree bomb walks', Object.fromEntries(Object.entries(answers).map(([key, response]) => [key, response.status])));
    for (const key of ['listing', 'subdirectory', 'history', 'commit'] as const) {
      expect({ key, status: answers[key].status }).toEqual({ key, status: 422 });
      expect(answers[key].body.message).toMatch(/too large/);
    }
    expect(answers.archive.status).toBe(413);
    // Every git the requests started has exited (the last-commit walk runs in the background, so this waits).
    await eventually(
      () => gitProcessesOn(dir),
      (pids) => pids.length === 0,
    );
    const processes = t.app.get(GitProcesses);
    await eventually(
      () => processes.runningCount + processes.clientSlotsHeld,
      (count) => count === 0,
    );
    // The path of one file is still answered (history simplification does not expand the tree).
    const file = await t.http.get(t.api(`/repos/${repo}/contents/d0/d0/d0/d0/d0/d0/d0/d0/d0/f0`));
    expect(file.status).toBe(200);
    expect(file.body.last_commit_sha).toBe(commit);
  });
});
