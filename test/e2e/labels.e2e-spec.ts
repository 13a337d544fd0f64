import { makeOrg, makeRepo, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

const LABEL_KEYS = ['id', 'name', 'exclusive', 'is_archived', 'color', 'description', 'url'];

describe('labels: /repos/{o}/{r}/labels and /orgs/{org}/labels', () => {
  let t: TestApp;
  let owner: TestUser;
  let stranger: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await makeUser(t);
    stranger = await makeUser(t);
  });
  afterAll(() => t.close());

  describe('repository labels', () => {
    it('creates, lists, reads (by id or name), edits and deletes labels with Forgejo’s Label JSON', async () => {
      const repo = await makeRepo(t, owner);
      const base = `/repos/${repo.full_name}/labels`;
      const bug = await t.http.post(t.api(base)).set(withToken(owner.token)).send({ name: 'bug', color: '#EE0701', description: 'broken' }).expect(201);
      expect(Object.keys(bug.body)).toEqual(LABEL_KEYS);
      expect(bug.body).toMatchObject({ name: 'bug', color: 'ee0701', description: 'broken', exclusive: false, is_archived: false });
      expect(bug.body.url).toBe(`http://anvil.test/api/v1/repos/${repo.full_name}/labels/${bug.body.id}`);
      const scoped = await t.http.post(t.api(base)).set(withToken(owner.token)).send({ name: 'kind/feature', color: 'abc', exclusive: true }).expect(201);
      expect(scoped.body).toMatchObject({ color: 'aabbcc', exclusive: true });
      const listed = await t.http.get(t.api(base)).expect(200);
      expect(listed.body.map((label: { name: string }) => label.name)).toEqual(['bug', 'kind/feature']);
      expect(listed.headers['x-total-count']).toBe('2');
      const reversed = await t.http.get(t.api(`${base}?sort=reversealphabetically&limit=1`)).expect(200);
      expect(reversed.body.map((label: { name: string }) => label.name)).toEqual(['kind/feature']);
      expect((await t.http.get(t.api(`${base}/${bug.body.id}`)).expect(200)).body).toEqual(bug.body);
      expect((await t.http.get(t.api(`${base}/bug`)).expect(200)).body.id).toBe(bug.body.id);
      const edited = await t.http
        .patch(t.api(`${base}/${bug.body.id}`))
        .set(withToken(owner.token))
        .send({ color: '00aabb', is_archived: true })
        .expect(200);
      expect(edited.body).toMatchObject({ name: 'bug', color: '00aabb', description: 'broken', is_archived: true });
      // As Forgejo: an edit without is_archived unarchives.
      const renamed = await t.http
        .patch(t.api(`${base}/${bug.body.id}`))
        .set(withToken(owner.token))
        .send({ name: 'defect' })
        .expect(200);
      expect(renamed.body).toMatchObject({ name: 'defect', is_archived: false });
      await t.http
        .delete(t.api(`${base}/${bug.body.id}`))
        .set(withToken(owner.token))
        .expect(204);
      await t.http.get(t.api(`${base}/${bug.body.id}`)).expect(404);
      // Deleting again is not an error, as Forgejo.
      await t.http
        .delete(t.api(`${base}/${bug.body.id}`))
        .set(withToken(owner.token))
        .expect(204);
    });

    it('refuses duplicates (409), bad colours and missing fields (422), and writes by non-writers (403)', async () => {
      const repo = await makeRepo(t, owner);
      const base = `/repos/${repo.full_name}/labels`;
      const first = await t.http.post(t.api(base)).set(withToken(owner.token)).send({ name: 'dup', color: '#000000' }).expect(201);
      await t.http.post(t.api(base)).set(withToken(owner.token)).send({ name: 'dup', color: '#ffffff' }).expect(409);
      const other = await t.http.post(t.api(base)).set(withToken(owner.token)).send({ name: 'other', color: '#ffffff' }).expect(201);
      await t.http
        .patch(t.api(`${base}/${other.body.id}`))
        .set(withToken(owner.token))
        .send({ name: 'dup' })
        .expect(409);
      const badColor = await t.http.post(t.api(base)).set(withToken(owner.token)).send({ name: 'c', color: 'red' }).expect(422);
      // Three letters are read as shorthand first, as Forgejo does.
      expect(badColor.body.message).toBe('bad color code: #red');
      await t.http.post(t.api(base)).set(withToken(owner.token)).send({ name: 'c' }).expect(422);
      await t.http.post(t.api(base)).set(withToken(owner.token)).send({ color: '#000000' }).expect(422);
      await t.http.post(t.api(base)).set(withToken(stranger.token)).send({ name: 'x', color: '#000000' }).expect(403);
      await t.http
        .patch(t.api(`${base}/${first.body.id}`))
        .set(withToken(stranger.token))
        .send({ name: 'x' })
        .expect(403);
      await t.http
        .delete(t.api(`${base}/${first.body.id}`))
        .set(withToken(stranger.token))
        .expect(403);
      await t.http.post(t.api(base)).send({ name: 'x', color: '#000000' }).expect(401);
      const hidden = await makeRepo(t, owner, { private: true });
      await t.http
        .get(t.api(`/repos/${hidden.full_name}/labels`))
        .set(withToken(stranger.token))
        .expect(404);
      // A label of another repository is not found through this one.
      await t.http.get(t.api(`/repos/${repo.full_name}/labels/999999`)).expect(404);
    });

    it('an archived repository keeps its labels writable, as Forgejo (its code stays read-only)', async () => {
      const repo = await makeRepo(t, owner);
      await t.http
        .patch(t.api(`/repos/${repo.full_name}`))
        .set(withToken(owner.token))
        .send({ archived: true })
        .expect(200);
      const label = await t.http
        .post(t.api(`/repos/${repo.full_name}/labels`))
        .set(withToken(owner.token))
        .send({ name: 'kept', color: '#00aa00' })
        .expect(201);
      await t.http
        .patch(t.api(`/repos/${repo.full_name}/labels/${label.body.id}`))
        .set(withToken(owner.token))
        .send({ color: '00bb00' })
        .expect(200);
      await t.http
        .delete(t.api(`/repos/${repo.full_name}/labels/${label.body.id}`))
        .set(withToken(owner.token))
        .expect(204);
      await t.http
        .post(t.api(`/repos/${repo.full_name}/labels`))
        .set(withToken(stranger.token))
        .send({ name: 'x', color: '#000000' })
        .expect(403);
      await t.http
        .post(t.api(`/repos/${repo.full_name}/contents/x.txt`))
        .set(withToken(owner.token))
        .send({ content: Buffer.from('x').toString('base64') })
        .expect(423);
    });

    it('a deleted repository takes its labels with it', async () => {
      const repo = await makeRepo(t, owner);
      await t.http
        .post(t.api(`/repos/${repo.full_name}/labels`))
        .set(withToken(owner.token))
        .send({ name: 'l', color: '#000000' })
        .expect(201);
      await t.http
        .delete(t.api(`/repos/${repo.full_name}`))
        .set(withToken(owner.token))
        .expect(204);
      expect(Number((await t.dataSource.query('SELECT COUNT(*) AS n FROM label WHERE repo_id = ?', [repo.id]))[0].n)).toBe(0);
    });
  });

  describe('organisation labels', () => {
    it('owners manage them; everyone who sees the organisation lists them', async () => {
      const org = await makeOrg(t, owner.user);
      const base = `/orgs/${org.name}/labels`;
      const created = await t.http.post(t.api(base)).set(withToken(owner.token)).send({ name: 'team', color: '112233' }).expect(201);
      expect(created.body.url).toBe(`http://anvil.test/api/v1/orgs/${org.name}/labels/${created.body.id}`);
      await t.http.post(t.api(base)).set(withToken(stranger.token)).send({ name: 'x', color: '112233' }).expect(403);
      await t.http.post(t.api(base)).set(withToken(owner.token)).send({ name: 'team', color: '112233' }).expect(409);
      const listed = await t.http.get(t.api(base)).expect(200);
      expect(listed.body.map((label: { name: string }) => label.name)).toEqual(['team']);
      await t.http.get(t.api(`${base}/${created.body.id}`)).expect(401);
      await t.http
        .get(t.api(`${base}/${created.body.id}`))
        .set(withToken(stranger.token))
        .expect(200);
      const edited = await t.http
        .patch(t.api(`${base}/${created.body.id}`))
        .set(withToken(owner.token))
        .send({ description: 'd' })
        .expect(200);
      expect(edited.body).toMatchObject({ name: 'team', description: 'd' });
      await t.http
        .delete(t.api(`${base}/${created.body.id}`))
        .set(withToken(stranger.token))
        .expect(403);
      await t.http
        .delete(t.api(`${base}/${created.body.id}`))
        .set(withToken(owner.token))
        .expect(204);
      expect((await t.http.get(t.api(base)).expect(200)).body).toEqual([]);
      const secret = await makeOrg(t, owner.user, { visibility: 'private' });
      await t.http
        .get(t.api(`/orgs/${secret.name}/labels`))
        .set(withToken(stranger.token))
        .expect(404);
      await t.http.get(t.api(`/orgs/${uniqueName('none')}/labels`)).expect(404);
    });

    it('a repository label id is not an organisation label, and the reverse', async () => {
      const org = await makeOrg(t, owner.user);
      const repo = await makeRepo(t, owner, { org: org.name });
      const orgLabel = await t.http
        .post(t.api(`/orgs/${org.name}/labels`))
        .set(withToken(owner.token))
        .send({ name: 'o', color: '000000' })
        .expect(201);
      const repoLabel = await t.http
        .post(t.api(`/repos/${repo.full_name}/labels`))
        .set(withToken(owner.token))
        .send({ name: 'o', color: '000000' })
        .expect(201);
      await t.http.get(t.api(`/repos/${repo.full_name}/labels/${orgLabel.body.id}`)).expect(404);
      await t.http
        .get(t.api(`/orgs/${org.name}/labels/${repoLabel.body.id}`))
        .set(withToken(owner.token))
        .expect(404);
    });
  });
});
