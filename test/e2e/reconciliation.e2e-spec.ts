import * as fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { leftByDeadProcess, ownProcessTag } from '../../src/common/process-identity';
import { RepositoryJournal } from '../../src/git/repository-journal';
import { Reconciliation } from '../../src/integrity/reconciliation.service';
import { makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp, usesMysql } from '../support/test-app';

/**
 * The start-up reconciliation (and `anvil doctor`) against leftovers planted as a crash leaves them: it reports
 * without changing anything unless told to fix, repairs each kind, quarantines what could be user data under
 * DATA_DIR/lost+found, and leaves alone what is younger than RECONCILE_STALE_AFTER (another instance's live work).
 */
describe('reconciliation of the database with DATA_DIR', () => {
  let t: TestApp;
  let owner: TestUser;
  const past = new Date(Date.now() - 2 * 3600_000);

  beforeAll(async () => {
    t = await startTestApp({ RECONCILE_START_BUDGET: '2' });
    owner = await makeUser(t);
  });
  afterAll(() => t.close());

  const reconciliation = () => t.app.get(Reconciliation);
  const repoDir = (name: string) => path.join(t.dataDir, 'repositories', owner.name.toLowerCase(), `${name.toLowerCase()}.git`);
  const kinds = (findings: { kind: string }[]) => findings.map((finding) => finding.kind).sort();
  const aged = (file: string) => fs.utimesSync(file, past, past);

  it('finds nothing in a consistent data directory', async () => {
    await makeRepo(t, owner, { autoInit: true });
    expect((await reconciliation().run({ fix: false })).findings).toEqual([]);
  });

  it('reports, then repairs: leftovers in a repository, a directory without a row, a stale temporary file, drifted counters', async () => {
    const repo = await makeRepo(t, owner, { autoInit: true });
    const lock = path.join(repoDir(repo.name), 'refs', 'heads', 'main.lock');
    fs.writeFileSync(lock, 'x');
    aged(lock);
    const quarantine = path.join(repoDir(repo.name), 'objects', 'tmp_objdir-incoming-abc');
    fs.mkdirSync(quarantine);
    fs.writeFileSync(path.join(quarantine, 'pack'), 'y');
    aged(quarantine);
    const young = path.join(repoDir(repo.name), 'packed-refs.lock');
    fs.writeFileSync(young, 'live');
    const orphan = repoDir('orphan-repository');
    fs.cpSync(repoDir(repo.name), orphan, { recursive: true });
    fs.rmSync(path.join(orphan, 'refs', 'heads', 'main.lock'));
    aged(orphan);
    const index = path.join(t.dataDir, 'tmp', 'git-index', 'anvil-index-0123');
    fs.mkdirSync(path.dirname(index), { recursive: true });
    fs.writeFileSync(index, 'z');
    aged(index);
    await t.dataSource.query('UPDATE repository SET num_stars = 5, git_size = 0 WHERE id = ?', [repo.id]);

    const report = await reconciliation().run({ fix: false });
    expect(kinds(report.findings)).toEqual([
      'counter-drift',
      'directory-without-repository',
      'size-recomputed',
      'stale-git-leftover',
      'stale-git-leftover',
      'stale-temporary-file',
    ]);
    expect(report.findings.every((finding) => finding.action.startsWith('would be'))).toBe(true);
    expect(fs.existsSync(lock) && fs.existsSync(orphan) && fs.existsSync(index)).toBe(true);

    const repaired = await reconciliation().run({ fix: true });
    expect(kinds(repaired.findings)).toEqual(kinds(report.findings));
    expect(fs.existsSync(lock) || fs.existsSync(quarantine) || fs.existsSync(index) || fs.existsSync(orphan)).toBe(false);
    // Younger than RECONCILE_STALE_AFTER: possibly another instance's live write.
    expect(fs.existsSync(young)).toBe(true);
    fs.rmSync(young);
    // What could be user data is moved, never deleted.
    const lostFound = path.join(t.dataDir, 'lost+found');
    const moved = fs.readdirSync(lostFound).map((stamp) => path.join(lostFound, stamp, 'repositories', owner.name.toLowerCase(), 'orphan-repository.git'));
    expect(moved.some((dir) => fs.existsSync(path.join(dir, 'HEAD')))).toBe(true);
    const answer = await t.http
      .get(t.api(`/repos/${owner.name}/${repo.name}`))
      .set(withToken(owner.token))
      .expect(200);
    expect(answer.body.stars_count).toBe(0);
    expect(answer.body.size).toBeGreaterThan(0);
    expect((await reconciliation().run({ fix: false })).findings).toEqual([]);
  });

  it('recreates a lost repository directory as an empty repository', async () => {
    const lost = await makeRepo(t, owner, { autoInit: true });
    fs.rmSync(repoDir(lost.name), { recursive: true });
    const repaired = await reconciliation().run({ fix: true });
    expect(kinds(repaired.findings)).toEqual(['repository-without-directory']);
    const answer = await t.http
      .get(t.api(`/repos/${owner.name}/${lost.name}`))
      .set(withToken(owner.token))
      .expect(200);
    expect(answer.body.empty).toBe(true);
    expect((await reconciliation().run({ fix: false })).findings).toEqual([]);
  });

  it('moves a parked upload whose row committed into place, quarantines a file without a row, removes rows whose file is lost', async () => {
    const put = (name: string, body: string) =>
      t.http
        .put(`/api/packages/${owner.name}/generic/reconciled/1.0.0/${name}`)
        .set(withToken(owner.token))
        .set('Content-Type', 'application/octet-stream')
        .send(Buffer.from(body));
    await put('kept.bin', 'kept content').expect(201);
    await put('lost.bin', 'lost content').expect(201);
    const [kept] = (await t.dataSource.query(
      "SELECT b.sha256 AS sha256 FROM package_blob b INNER JOIN package_file f ON f.blob_id = b.id WHERE f.name = 'kept.bin'",
    )) as { sha256: string }[];
    const [lost] = (await t.dataSource.query(
      "SELECT b.sha256 AS sha256 FROM package_blob b INNER JOIN package_file f ON f.blob_id = b.id WHERE f.name = 'lost.bin'",
    )) as { sha256: string }[];
    const fileOf = (sha256: string) => path.join(t.dataDir, 'packages', sha256[0], sha256[1], sha256);
    // A crash between the row's commit and the rename: the content waits in the pending area.
    const pending = path.join(t.dataDir, 'tmp', 'pending', `packages.${kept.sha256[0]}.${kept.sha256[1]}.${kept.sha256}.00000000-0000-4000-8000-000000000000`);
    fs.mkdirSync(path.dirname(pending), { recursive: true });
    fs.renameSync(fileOf(kept.sha256), pending);
    fs.rmSync(fileOf(lost.sha256));
    const stray = fileOf('f'.repeat(64));
    fs.mkdirSync(path.dirname(stray), { recursive: true });
    fs.writeFileSync(stray, 'no row');
    await t.dataSource.query(
      "INSERT INTO package_version (package_id, creator_id, version, lower_version, created_unix) SELECT package_id, creator_id, '9.9.9', '9.9.9', created_unix FROM package_version WHERE lower_version = '1.0.0'",
    );

    const repaired = await reconciliation().run({ fix: true });
    expect(kinds(repaired.findings)).toEqual(['blob-without-row', 'package-blob-without-file', 'package-rows-without-file', 'parked-upload-finished']);
    const download = await t.http.get(`/api/packages/${owner.name}/generic/reconciled/1.0.0/kept.bin`).set(withToken(owner.token)).buffer(true).expect(200);
    expect(Buffer.from(download.body as Buffer).toString()).toBe('kept content');
    await t.http.get(`/api/packages/${owner.name}/generic/reconciled/1.0.0/lost.bin`).set(withToken(owner.token)).expect(404);
    await t.http
      .get(t.api(`/packages/${owner.name}/generic/reconciled/9.9.9`))
      .set(withToken(owner.token))
      .expect(404);
    expect(fs.existsSync(stray)).toBe(false);
    expect((await reconciliation().run({ fix: false })).findings).toEqual([]);
  });

  it('pairs back a rename a crash cut off: completed when the row has the new name, undone when it has the old one', async () => {
    const journal = t.app.get(RepositoryJournal);
    const undone = await makeRepo(t, owner, { autoInit: true });
    // Killed after the directory moved, before the row changed.
    await journal.begin({ kind: 'rename', repoId: undone.id, from: repoDir(undone.name), to: repoDir(`${undone.name}-new`) });
    fs.renameSync(repoDir(undone.name), repoDir(`${undone.name}-new`));
    const completed = await makeRepo(t, owner, { autoInit: true });
    // Killed after the row changed (another instance's directory move would have followed).
    await journal.begin({ kind: 'rename', repoId: completed.id, from: repoDir(completed.name), to: repoDir(`${completed.name}-new`) });
    await t.dataSource.query('UPDATE repository SET name = ?, lower_name = ? WHERE id = ?', [
      `${completed.name}-new`,
      `${completed.name}-new`.toLowerCase(),
      completed.id,
    ]);

    const report = await reconciliation().run({ fix: false, startUp: true });
    expect(kinds(report.findings)).toEqual(['rename-completed', 'rename-rolled-back']);
    const repaired = await reconciliation().run({ fix: true, startUp: true });
    expect(kinds(repaired.findings)).toEqual(['rename-completed', 'rename-rolled-back']);
    for (const [name, repo] of [
      [undone.name, undone],
      [`${completed.name}-new`, completed],
    ] as const) {
      const answer = await t.http
        .get(t.api(`/repos/${owner.name}/${name}`))
        .set(withToken(owner.token))
        .expect(200);
      expect(answer.body).toMatchObject({ id: repo.id, empty: false });
    }
    expect(fs.existsSync(repoDir(`${undone.name}-new`)) || fs.existsSync(repoDir(completed.name))).toBe(false);
    expect(await journal.pending()).toEqual([]);
    expect(
      fs.existsSync(path.join(t.dataDir, 'lost+found')) &&
        fs
          .readdirSync(path.join(t.dataDir, 'lost+found'))
          .some((stamp) =>
            fs.existsSync(path.join(t.dataDir, 'lost+found', stamp, 'repositories', owner.name.toLowerCase(), `${undone.name.toLowerCase()}-new.git`)),
          ),
    ).toBe(false);
    expect((await reconciliation().run({ fix: false })).findings).toEqual([]);
  });

  it('finds the directory of a creation whose row never committed through the journal, without walking every directory', async () => {
    const journal = t.app.get(RepositoryJournal);
    const source = await makeRepo(t, owner, { autoInit: true });
    const stray = repoDir('never-committed');
    fs.cpSync(repoDir(source.name), stray, { recursive: true });
    await journal.begin({ kind: 'create', to: stray });
    const repaired = await reconciliation().run({ fix: true, startUp: true });
    expect(kinds(repaired.findings)).toEqual(['directory-without-repository']);
    expect(fs.existsSync(stray)).toBe(false);
    expect(await journal.pending()).toEqual([]);
  });

  it('removes a journal entry a crash cut off while it was written, once stale, and leaves a young one', async () => {
    const journalDir = path.join(t.dataDir, 'repositories', '.journal');
    fs.mkdirSync(journalDir, { recursive: true });
    const stale = path.join(journalDir, 'create-00112233aabbccdd.json.partial');
    const young = path.join(journalDir, 'create-44556677aabbccdd.json.partial');
    fs.writeFileSync(stale, '{"kind":"cre');
    fs.writeFileSync(young, '{"kind":"cre');
    aged(stale);
    const repaired = await reconciliation().run({ fix: true, startUp: true });
    expect(repaired.findings.map((finding) => [finding.kind, finding.subject])).toEqual([
      ['stale-temporary-file', path.join('repositories', '.journal', path.basename(stale))],
    ]);
    expect(fs.existsSync(stale)).toBe(false);
    expect(fs.existsSync(young)).toBe(true);
    fs.rmSync(young);
  });

  it('a stopped sweep records how far it came, and the next one continues from there', async () => {
    await t.dataSource.query('UPDATE repository SET git_size = 0');
    const drifted = async () => Number((await t.dataSource.query('SELECT COUNT(*) AS n FROM repository WHERE git_size = 0'))[0].n);
    const before = await drifted();
    expect(before).toBeGreaterThan(1);
    const stopper = new AbortController();
    const checks = reconciliation() as unknown as { repository(...args: unknown[]): Promise<void> };
    const check = checks.repository.bind(checks);
    const spy = jest.spyOn(checks, 'repository').mockImplementation(async (...args: unknown[]) => {
      await check(...args);
      stopper.abort();
    });
    try {
      const stopped = await reconciliation().sweep({ fix: true, throttled: true, signal: stopper.signal });
      expect(stopped.swept).toBe(1);
      expect(await drifted()).toBe(before - 1);
    } finally {
      spy.mockRestore();
    }
    const next = await reconciliation().sweep({ fix: true, throttled: true });
    // Each repository it checked was one still drifted: it began after the one the stopped sweep measured.
    expect(next.swept).toBeGreaterThan(0);
    expect(await drifted()).toBe(before - 1 - next.swept);
    expect((await reconciliation().sweep({ fix: true, signal: AbortSignal.abort() })).swept).toBe(0);
    // Left as the next test expects it: every repository measured.
    while ((await drifted()) > 0) await reconciliation().sweep({ fix: true });
  });

  it("removes at once, however young, what a process of this machine that is gone left half-made; a live one's stays", async () => {
    // A process that ran here and ended: its pid is free (or another process's, started at another time).
    const ended = spawnSync('true');
    const dead = ownProcessTag().replace(/^([0-9a-f]{12})-\d+-\d+-/, `$1-${ended.pid}-1-`);
    expect(leftByDeadProcess(`${dead}~x`)).toBe(true);
    const journalDir = path.join(t.dataDir, 'repositories', '.journal');
    const incoming = path.join(t.dataDir, 'repositories', '.incoming');
    const uploads = path.join(t.dataDir, 'tmp', 'uploads');
    for (const dir of [journalDir, incoming, uploads]) fs.mkdirSync(dir, { recursive: true });
    const planted = (tag: string) => {
      const clone = path.join(incoming, `${tag}~1-00aa.git`);
      fs.mkdirSync(path.join(clone, 'objects'), { recursive: true });
      fs.writeFileSync(path.join(clone, 'HEAD'), 'ref: refs/heads/main\n');
      const entry = path.join(journalDir, `${tag}~create-00112233aabbccdd.json.partial`);
      fs.writeFileSync(entry, '{"kind":"cre');
      const upload = path.join(uploads, `${tag}~host-1-abcd`, 'part');
      fs.mkdirSync(path.dirname(upload), { recursive: true });
      fs.writeFileSync(upload, 'half an upload');
      return [clone, entry, upload];
    };
    const left = planted(dead);
    const live = planted(ownProcessTag());
    const repaired = await reconciliation().run({ fix: true, startUp: true });
    expect(repaired.findings.map((finding) => finding.kind)).toEqual(['stale-temporary-file', 'stale-temporary-file', 'stale-temporary-file']);
    expect(left.filter((file) => fs.existsSync(file))).toEqual([]);
    expect(live.filter((file) => fs.existsSync(file))).toEqual(live);
    for (const file of live) fs.rmSync(file, { recursive: true, force: true });
  });

  it('at start-up checks RECONCILE_START_BUDGET repositories in full, continuing where the previous start stopped', async () => {
    const total = Number((await t.dataSource.query('SELECT COUNT(*) AS n FROM repository'))[0].n);
    await t.dataSource.query('UPDATE repository SET git_size = 0');
    const drifted = async () => Number((await t.dataSource.query('SELECT COUNT(*) AS n FROM repository WHERE git_size = 0'))[0].n);
    const starts: number[] = [];
    let sizes = 0;
    while ((await drifted()) > 0 && starts.length < total + 2) {
      const report = await reconciliation().run({ fix: true, startUp: true });
      expect(report.swept).toBeLessThanOrEqual(2);
      starts.push(report.swept);
      sizes += report.findings.filter((finding) => finding.kind === 'size-recomputed').length;
    }
    // Each start took its share, and together they covered every repository once.
    expect(await drifted()).toBe(0);
    expect(sizes).toBe(total);
    expect(starts.length).toBe(Math.ceil(total / 2));
  });

  it('reports a table whose text does not compare byte for byte, and leaves its conversion to the operator', async () => {
    // A table made under the server's default collation, as in a database created before Anvil set utf8mb4_bin.
    if (usesMysql()) await t.dataSource.query('ALTER TABLE topic CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci');
    try {
      for (const fix of [false, true]) {
        const found = (await reconciliation().run({ fix })).findings.filter((finding) => finding.kind === 'table-collation');
        expect(found).toEqual(
          usesMysql()
            ? [
                {
                  kind: 'table-collation',
                  subject: 'topic (utf8mb4_general_ci)',
                  action: 'not repaired: while Anvil is stopped: ALTER TABLE `topic` CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin',
                },
              ]
            : [],
        );
      }
    } finally {
      if (usesMysql()) await t.dataSource.query('ALTER TABLE topic CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin');
    }
    expect((await reconciliation().run({ fix: false })).findings.filter((finding) => finding.kind === 'table-collation')).toEqual([]);
  });
});
