import { makeOrg, makeRepo, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { rawRequest } from '../support/raw-http';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Answers that once differed from Forgejo's: each test names the Forgejo answer and
 * fails on the answer Anvil gave before.
 */
describe('answers that once differed from Forgejo', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ QUOTA_ENABLED: 'true' });
    alice = await makeUser(t);
    bob = await makeUser(t);
  });
  afterAll(() => t.close());

  it('GET …/commits?path= with a path no commit touched is 404; a touched path lists its commits', async () => {
    const repo = await makeRepo(t, alice, { autoInit: true });
    await t.http
      .get(t.api(`/repos/${repo.full_name}/commits?path=no-such-file.txt`))
      .set(withToken(alice.token))
      .expect(404);
    const touched = await t.http
      .get(t.api(`/repos/${repo.full_name}/commits?path=README.md`))
      .set(withToken(alice.token))
      .expect(200);
    expect(touched.body).toHaveLength(1);
  });

  it('GET …/contents on an empty repository is 200 [] (any path)', async () => {
    const repo = await makeRepo(t, alice);
    for (const path of ['/contents', '/contents/some/file.txt']) {
      const answer = await t.http
        .get(t.api(`/repos/${repo.full_name}${path}`))
        .set(withToken(alice.token))
        .expect(200);
      expect(answer.body).toEqual([]);
    }
  });

  it('DELETE …/branches/{default} on an empty repository is 404 (the branch does not exist); on a full one 403', async () => {
    const empty = await makeRepo(t, alice);
    await t.http
      .delete(t.api(`/repos/${empty.full_name}/branches/${empty.default_branch}`))
      .set(withToken(alice.token))
      .expect(404);
    const full = await makeRepo(t, alice, { autoInit: true });
    await t.http
      .delete(t.api(`/repos/${full.full_name}/branches/${full.default_branch}`))
      .set(withToken(alice.token))
      .expect(403);
  });

  it('a generic package name outside ASCII word characters and -+. is 400', async () => {
    const put = (name: string) =>
      t.http
        .put(`/api/packages/${alice.name}/generic/${encodeURIComponent(name)}/1.0/file.bin`)
        .set(withToken(alice.token))
        .set('Content-Type', 'application/octet-stream')
        .send(Buffer.from('x'));
    expect((await put('päckage')).status).toBe(400);
    expect((await put('package_1.0-x+y')).status).toBe(201);
  });

  it('the package list of a private owner looks exactly like that of an owner that does not exist', async () => {
    const org = await makeOrg(t, alice.user, { visibility: 'private' } as never);
    const recluse = await makeUser(t, { visibility: 'private' });
    const missing = uniqueName('nobody');
    const compare = async (auth: Record<string, string>, owner = org.name) => {
      const hidden = await t.http.get(t.api(`/packages/${owner}`)).set(auth);
      const unknown = await t.http.get(t.api(`/packages/${missing}`)).set(auth);
      expect({ status: hidden.status, text: hidden.text, challenge: hidden.headers['www-authenticate'] }).toEqual({
        status: unknown.status,
        text: unknown.text,
        challenge: unknown.headers['www-authenticate'],
      });
      return hidden.status;
    };
    expect(await compare({})).toBeGreaterThanOrEqual(400);
    expect(await compare({}, recluse.name)).toBeGreaterThanOrEqual(400);
    expect(await compare(withToken(bob.token))).toBe(404);
    expect(await compare(withToken(bob.token), recluse.name)).toBe(404);
    for (const owner of [org.name, recluse.name, missing]) {
      for (const path of [`/api/v1/packages/${owner}/generic/p/1`, `/api/v1/packages/${owner}/generic/p/1/files`, `/api/packages/${owner}/generic/p/1/f.bin`]) {
        const answer = await t.http.get(path);
        expect(`${path.replace(owner, 'OWNER')} ${answer.status}`).toBe(`${path.replace(owner, 'OWNER')} 401`);
      }
    }
    await t.http
      .get(t.api(`/packages/${org.name}`))
      .set(withToken(alice.token))
      .expect(200);
  });

  it('an attachment upload refused by quota (multipart, small body, sent at once) gets its 413 through fetch, and the body is read to its end', async () => {
    const base = await t.listen();
    const carol = await makeUser(t);
    const admin = await makeUser(t, { admin: true });
    const repo = await makeRepo(t, carol, { autoInit: true });
    const release = await t.http
      .post(t.api(`/repos/${repo.full_name}/releases`))
      .set(withToken(carol.token))
      .send({ tag_name: 'v1' })
      .expect(201);
    const group = uniqueName('group');
    await t.http
      .post(t.api('/admin/quota/groups'))
      .set(withToken(admin.token))
      .send({ name: group, rules: [{ name: uniqueName('rule'), limit: 0, subjects: ['size:all'] }] })
      .expect(201);
    await t.http
      .put(t.api(`/admin/quota/groups/${group}/users/${carol.name}`))
      .set(withToken(admin.token))
      .expect(204);
    const form = new FormData();
    form.append('attachment', new Blob([Buffer.alloc(900 * 1024, 1)]), 'asset.bin');
    for (let attempt = 0; attempt < 3; attempt++) {
      const answer = await fetch(`${base}api/v1/repos/${repo.full_name}/releases/${release.body.id}/assets`, {
        method: 'POST',
        headers: withToken(carol.token),
        body: form,
      });
      expect(answer.status).toBe(413);
      expect(((await answer.json()) as { message: string }).message).toMatch(/quota/i);
    }

    // The answer comes before the body; the body's rest is then read and thrown away, so the client can finish
    // sending it and the connection serves the next request (before, it was closed under the sender).
    const boundary = 'anvil-boundary';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="attachment"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
      Buffer.alloc(300 * 1024, 2),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const url = new URL(base);
    const exchange = rawRequest(
      { host: url.hostname, port: Number(url.port) },
      `POST /api/v1/repos/${repo.full_name}/releases/${release.body.id}/assets HTTP/1.1\r\nHost: anvil.test\r\nAuthorization: token ${carol.token}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    exchange.socket.write(body.subarray(0, 1000));
    expect(await exchange.status()).toBe(413);
    expect(exchange.received()).not.toMatch(/connection: close/i);
    exchange.socket.write(body.subarray(1000));
    exchange.socket.write('GET /api/v1/version HTTP/1.1\r\nHost: anvil.test\r\nConnection: close\r\n\r\n');
    await exchange.closed();
    expect(exchange.received().match(/^HTTP\/1\.1 \d{3}/gm)).toEqual(['HTTP/1.1 413', 'HTTP/1.1 200']);
  });

  it('collaborators are for signed-in callers (401 after the repository lookup); an unknown user is 422', async () => {
    const repo = await makeRepo(t, alice);
    await t.http.get(t.api(`/repos/${repo.full_name}/collaborators`)).expect(401);
    await t.http.get(t.api(`/repos/${repo.full_name}/collaborators/${bob.name}`)).expect(401);
    await t.http.get(t.api(`/repos/${alice.name}/${uniqueName('missing')}/collaborators`)).expect(404);
    const unknown = await t.http
      .get(t.api(`/repos/${repo.full_name}/collaborators/${uniqueName('ghost')}`))
      .set(withToken(alice.token))
      .expect(422);
    expect(unknown.body.message).toContain('user does not exist');
    await t.http
      .get(t.api(`/repos/${repo.full_name}/collaborators/${bob.name}`))
      .set(withToken(alice.token))
      .expect(404);
    await t.http
      .get(t.api(`/repos/${repo.full_name}/collaborators`))
      .set(withToken(alice.token))
      .expect(200);
  });

  it('a team member who sees a private repository but not its code gets 403 on code reads, branch creation and contents writes', async () => {
    const org = await makeOrg(t, alice.user);
    const repo = (
      await t.http
        .post(t.api(`/orgs/${org.name}/repos`))
        .set(withToken(alice.token))
        .send({ name: uniqueName('repo'), private: true, auto_init: true })
        .expect(201)
    ).body;
    const team = await t.http
      .post(t.api(`/orgs/${org.name}/teams`))
      .set(withToken(alice.token))
      .send({ name: uniqueName('triage'), units_map: { 'repo.issues': 'write' }, includes_all_repositories: true })
      .expect(201);
    const member = await makeUser(t);
    await t.http
      .put(t.api(`/teams/${team.body.id}/members/${member.name}`))
      .set(withToken(alice.token))
      .expect(204);
    const as = withToken(member.token);
    await t.http
      .get(t.api(`/repos/${repo.full_name}`))
      .set(as)
      .expect(200);
    const refusals = [
      await t.http.get(t.api(`/repos/${repo.full_name}/contents/README.md`)).set(as),
      await t.http
        .post(t.api(`/repos/${repo.full_name}/branches`))
        .set(as)
        .send({ new_branch_name: 'feature' }),
      await t.http
        .post(t.api(`/repos/${repo.full_name}/contents/new.txt`))
        .set(as)
        .send({ content: Buffer.from('x').toString('base64') }),
    ];
    for (const refused of refusals) {
      expect(refused.status).toBe(403);
      expect(refused.body.message).toBe('user should have specific read permission or be a repo admin or a site admin');
    }
    // A stranger still learns nothing: 404.
    await t.http
      .get(t.api(`/repos/${repo.full_name}/contents/README.md`))
      .set(withToken(bob.token))
      .expect(404);
  });

  it('PUT …/contents/{path} on an empty repository is 422 "repo is empty"', async () => {
    const repo = await makeRepo(t, alice);
    const answer = await t.http
      .put(t.api(`/repos/${repo.full_name}/contents/a.txt`))
      .set(withToken(alice.token))
      .send({ content: Buffer.from('x').toString('base64'), sha: '0'.repeat(40) })
      .expect(422);
    expect(answer.body.message).toBe('repo is empty');
  });

  it('GET …/git/trees/{sha} states the entry count in X-Total-Count', async () => {
    const repo = await makeRepo(t, alice, { autoInit: true });
    const tree = await t.http
      .get(t.api(`/repos/${repo.full_name}/git/trees/${repo.default_branch}`))
      .set(withToken(alice.token))
      .expect(200);
    expect(tree.body.total_count).toBeGreaterThan(0);
    expect(tree.headers['x-total-count']).toBe(String(tree.body.total_count));
  });
});
