import { CollaborationEntity } from '../../src/collaborators/collaboration.entity';
import { makeOrg, makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

describe('collaborators: a mode on one repository, through the access policy', () => {
  let t: TestApp;
  let owner: TestUser;
  let collaborator: TestUser;
  let stranger: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await makeUser(t);
    collaborator = await makeUser(t);
    stranger = await makeUser(t);
  });

  afterAll(() => t.close());

  const as = (user: TestUser) => withToken(user.token);
  const file = (name: string) => ({ content: Buffer.from(name).toString('base64'), message: `add ${name}` });

  it('read, then write, then admin, then nothing: every door gives what the mode says', async () => {
    const repo = await makeRepo(t, owner, { private: true, autoInit: true });
    const path = `/repos/${owner.name}/${repo.name}`;
    await t.http.get(t.api(path)).set(as(collaborator)).expect(404);

    await t.http
      .put(t.api(`${path}/collaborators/${collaborator.name}`))
      .set(as(owner))
      .send({ permission: 'read' })
      .expect(204);
    const read = await t.http.get(t.api(path)).set(as(collaborator)).expect(200);
    expect(read.body.permissions).toEqual({ admin: false, push: false, pull: true });
    await t.http
      .get(t.api(`${path}/contents/README.md`))
      .set(as(collaborator))
      .expect(200);
    await t.http
      .post(t.api(`${path}/contents/a.txt`))
      .set(as(collaborator))
      .send(file('a'))
      .expect(403);
    const mine = await t.http.get(t.api('/user/repos')).set(as(collaborator)).expect(200);
    expect(mine.body.map((item: { full_name: string }) => item.full_name)).toContain(`${owner.name}/${repo.name}`);
    const search = await t.http
      .get(t.api('/repos/search?q=' + repo.name))
      .set(as(collaborator))
      .expect(200);
    expect(search.body.data.map((item: { name: string }) => item.name)).toContain(repo.name);
    await t.http.get(t.api(path)).set(as(stranger)).expect(404);

    await t.http
      .put(t.api(`${path}/collaborators/${collaborator.name}`))
      .set(as(owner))
      .send({ permission: 'write' })
      .expect(204);
    const write = await t.http.get(t.api(path)).set(as(collaborator)).expect(200);
    expect(write.body.permissions).toEqual({ admin: false, push: true, pull: true });
    await t.http
      .post(t.api(`${path}/contents/b.txt`))
      .set(as(collaborator))
      .send(file('b'))
      .expect(201);
    await t.http.patch(t.api(path)).set(as(collaborator)).send({ description: 'no' }).expect(403);
    await t.http
      .put(t.api(`${path}/collaborators/${stranger.name}`))
      .set(as(collaborator))
      .send({})
      .expect(403);

    await t.http
      .put(t.api(`${path}/collaborators/${collaborator.name}`))
      .set(as(owner))
      .send({ permission: 'admin' })
      .expect(204);
    expect((await t.http.get(t.api(path)).set(as(collaborator)).expect(200)).body.permissions).toEqual({ admin: true, push: true, pull: true });
    await t.http.patch(t.api(path)).set(as(collaborator)).send({ description: 'yes' }).expect(200);

    const permission = await t.http
      .get(t.api(`${path}/collaborators/${collaborator.name}/permission`))
      .set(as(collaborator))
      .expect(200);
    expect(permission.body).toMatchObject({ permission: 'admin', role_name: 'admin', user: { login: collaborator.name } });
    const list = await t.http
      .get(t.api(`${path}/collaborators`))
      .set(as(owner))
      .expect(200);
    expect(list.body.map((user: { login: string }) => user.login)).toEqual([collaborator.name]);
    expect(list.headers['x-total-count']).toBe('1');
    await t.http
      .get(t.api(`${path}/collaborators/${collaborator.name}`))
      .set(as(owner))
      .expect(204);
    await t.http
      .get(t.api(`${path}/collaborators/${stranger.name}`))
      .set(as(owner))
      .expect(404);

    await t.http
      .delete(t.api(`${path}/collaborators/${collaborator.name}`))
      .set(as(owner))
      .expect(204);
    await t.http.get(t.api(path)).set(as(collaborator)).expect(404);
  });

  it('refuses unknown users, organisations and bad permissions with 422', async () => {
    const repo = await makeRepo(t, owner);
    const path = `/repos/${owner.name}/${repo.name}/collaborators`;
    await t.http
      .put(t.api(`${path}/nosuchuser404`))
      .set(as(owner))
      .send({ permission: 'read' })
      .expect(422);
    const org = await makeOrg(t, owner.user);
    await t.http
      .put(t.api(`${path}/${org.name}`))
      .set(as(owner))
      .send({ permission: 'read' })
      .expect(422);
    await t.http
      .put(t.api(`${path}/${collaborator.name}`))
      .set(as(owner))
      .send({ permission: 'owner' })
      .expect(422);
    await t.http
      .get(t.api(`${path}/${owner.name}/permission`))
      .set(as(stranger))
      .expect(403);
  });

  it('a deleted repository leaves no collaboration behind; concurrent additions leave one row', async () => {
    const repo = await makeRepo(t, owner, { private: true });
    const path = `/repos/${owner.name}/${repo.name}`;
    const modes = ['read', 'write', 'admin', 'read', 'write', 'admin'];
    const answers = await Promise.all(
      modes.map((permission) =>
        t.http
          .put(t.api(`${path}/collaborators/${collaborator.name}`))
          .set(as(owner))
          .send({ permission }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(modes.map(() => 204));
    expect(await t.dataSource.getRepository(CollaborationEntity).countBy({ repoId: repo.id })).toBe(1);
    await t.http.delete(t.api(path)).set(as(owner)).expect(204);
    expect(await t.dataSource.getRepository(CollaborationEntity).countBy({ repoId: repo.id })).toBe(0);
  });
});
