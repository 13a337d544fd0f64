import * as fs from 'node:fs';
import type { UserEntity } from '../../src/users/user.entity';
import { UsersService } from '../../src/users/users.service';
import { makeOrg, makeRepo, makeToken, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { git, repositoryDir } from '../support/git';
import { startTestApp, TestApp } from '../support/test-app';

describe('repositories: read, change, delete, visibility', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let admin: TestUser;
  let org: UserEntity;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await makeUser(t);
    bob = await makeUser(t);
    admin = await makeUser(t, { admin: true });
    org = await makeOrg(t, alice.user);
  });
  afterAll(() => t.close());

  const repoDir = (owner: string, name: string) => repositoryDir(t.dataDir, owner, name);
  const get = (owner: string, name: string, token?: string) => {
    const request = t.http.get(t.api(`/repos/${owner}/${name}`));
    return token ? request.set(withToken(token)) : request;
  };
  const quoted = (table: string) => (t.dataSource.options.type === 'mysql' ? `\`${table}\`` : `"${table}"`);
  const numRepos = async (id: number) => Number((await t.dataSource.query(`SELECT num_repos AS n FROM ${quoted('user')} WHERE id = ${id}`))[0].n);

  describe('GET /repos/{owner}/{repo}', () => {
    it('answers a public repository to anyone, matching owner and name case-insensitively, with pull-only permissions', async () => {
      const repo = await makeRepo(t, alice, { name: uniqueName('Pub'), description: 'hello' });
      const anonymous = await get(alice.name.toUpperCase(), repo.name.toLowerCase()).expect(200);
      expect(anonymous.body.name).toBe(repo.name);
      expect(anonymous.body.full_name).toBe(`${alice.name}/${repo.name}`);
      expect(anonymous.body.permissions).toEqual({ admin: false, push: false, pull: true });
      expect(anonymous.body.owner.email).toBe(`${alice.name.toLowerCase()}@noreply.anvil.test`);
      const other = await get(alice.name, repo.name, bob.token).expect(200);
      expect(other.body.permissions).toEqual({ admin: false, push: false, pull: true });
      expect(other.body.owner.email).toBe(alice.email);
      const owner = await get(alice.name, repo.name, alice.token).expect(200);
      expect(owner.body.permissions).toEqual({ admin: true, push: true, pull: true });
      const siteAdmin = await get(alice.name, repo.name, admin.token).expect(200);
      expect(siteAdmin.body.permissions).toEqual({ admin: true, push: true, pull: true });
      expect(owner.body).toEqual({ ...repo, permissions: owner.body.permissions });
    });

    it('unknown owner or repository → 404 with an empty body', async () => {
      const missing = await get(alice.name, 'no-such-repo').expect(404);
      expect(missing.text).toBe('');
      await get('no-such-owner', 'x').expect(404);
    });

    it('a private repository: owner and site admin see it; anonymous and other users get 404', async () => {
      const repo = await makeRepo(t, alice, { private: true });
      await get(alice.name, repo.name).expect(404);
      await get(alice.name, repo.name, bob.token).expect(404);
      expect((await get(alice.name, repo.name, alice.token).expect(200)).body.private).toBe(true);
      expect((await get(alice.name, repo.name, admin.token).expect(200)).body.permissions.admin).toBe(true);
    });

    it("a private organisation repository: the org's owners and site admins see it, others get 404", async () => {
      const repo = await makeRepo(t, alice, { org: org.name, private: true });
      const owner = await get(org.name, repo.name, alice.token).expect(200);
      expect(owner.body.permissions).toEqual({ admin: true, push: true, pull: true });
      await get(org.name, repo.name, bob.token).expect(404);
      await get(org.name, repo.name).expect(404);
      await get(org.name, repo.name, admin.token).expect(200);
    });

    it("follows the owner's visibility: private owner → only self and admin, limited owner → signed-in users", async () => {
      const hidden = await makeUser(t, { visibility: 'private' });
      const hiddenRepo = await makeRepo(t, hidden);
      await get(hidden.name, hiddenRepo.name).expect(404);
      await get(hidden.name, hiddenRepo.name, bob.token).expect(404);
      const own = await get(hidden.name, hiddenRepo.name, hidden.token).expect(200);
      expect(own.body.internal).toBe(true);
      await get(hidden.name, hiddenRepo.name, admin.token).expect(200);

      const limited = await makeUser(t, { visibility: 'limited' });
      const limitedRepo = await makeRepo(t, limited);
      await get(limited.name, limitedRepo.name).expect(404);
      const seen = await get(limited.name, limitedRepo.name, bob.token).expect(200);
      expect(seen.body.internal).toBe(false);
    });

    it('a private organisation hides its public repositories from non-members', async () => {
      const privateOrg = await makeOrg(t, alice.user, { visibility: 'private' });
      const repo = await makeRepo(t, alice, { org: privateOrg.name });
      await get(privateOrg.name, repo.name).expect(404);
      await get(privateOrg.name, repo.name, bob.token).expect(404);
      expect((await get(privateOrg.name, repo.name, alice.token).expect(200)).body.internal).toBe(true);
    });

    it('a restricted user sees only repositories they have explicit access to', async () => {
      const restricted = await makeUser(t);
      await t.app.get(UsersService).edit(restricted.name, { restricted: true });
      const repo = await makeRepo(t, alice);
      await get(alice.name, repo.name, restricted.token).expect(404);
      const own = await makeRepo(t, restricted);
      await get(restricted.name, own.name, restricted.token).expect(200);
    });

    it('a public-only token gets 403 on a private repository it could otherwise read', async () => {
      const repo = await makeRepo(t, alice, { private: true });
      const publicOnly = await makeToken(t, alice.user, ['public-only', 'read:repository']);
      const response = await get(alice.name, repo.name, publicOnly).expect(403);
      expect(response.body.message).toBe('token scope is limited to public repos');
      await get(alice.name, (await makeRepo(t, alice)).name, publicOnly).expect(200);
      // Unreadable comes first: another user's private repository is 404.
      const bobsPublicOnly = await makeToken(t, bob.user, ['public-only', 'read:repository']);
      await get(alice.name, repo.name, bobsPublicOnly).expect(404);
    });

    it('needs read:repository on a token', async () => {
      const token = await makeToken(t, alice.user, ['read:user']);
      const response = await get(alice.name, 'anything', token).expect(403);
      expect(response.body.message).toBe('token does not have at least one of required scope(s): [read:repository]');
    });
  });

  describe('PATCH /repos/{owner}/{repo}', () => {
    const patch = (owner: string, name: string, token: string | undefined, body: object) => {
      const request = t.http.patch(t.api(`/repos/${owner}/${name}`));
      return (token ? request.set(withToken(token)) : request).send(body);
    };

    it('changes description, website, private and template for the owner', async () => {
      const repo = await makeRepo(t, alice);
      const response = await patch(alice.name, repo.name, alice.token, {
        description: 'new words',
        website: 'https://example.com',
        private: true,
        template: true,
      }).expect(200);
      expect(response.body).toMatchObject({ description: 'new words', website: 'https://example.com', private: true, template: true });
      expect(response.body.permissions).toEqual({ admin: true, push: true, pull: true });
      await get(alice.name, repo.name).expect(404);
      const unchanged = await patch(alice.name, repo.name, alice.token, {}).expect(200);
      expect(unchanged.body.description).toBe('new words');
      const noBody = await t.http
        .patch(t.api(`/repos/${alice.name}/${repo.name}`))
        .set(withToken(alice.token))
        .expect(200);
      expect(noBody.body.website).toBe('https://example.com');
    });

    it('moves HEAD on disk when the default branch changes on an empty repository', async () => {
      const repo = await makeRepo(t, alice);
      const response = await patch(alice.name, repo.name, alice.token, { default_branch: 'develop' }).expect(200);
      expect(response.body.default_branch).toBe('develop');
      expect(git(repoDir(alice.name, repo.name), 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/develop');
    });

    it('on a repository with commits, changes the default branch only to a branch that exists', async () => {
      const repo = await makeRepo(t, alice, { autoInit: true });
      const dir = repoDir(alice.name, repo.name);
      const ignored = await patch(alice.name, repo.name, alice.token, { default_branch: 'nothing-here' }).expect(200);
      expect(ignored.body.default_branch).toBe('main');
      expect(git(dir, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
      git(dir, 'update-ref', 'refs/heads/release', git(dir, 'rev-parse', 'main').trim());
      const changed = await patch(alice.name, repo.name, alice.token, { default_branch: 'release' }).expect(200);
      expect(changed.body.default_branch).toBe('release');
      expect(git(dir, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/release');
    });

    it('validates the body with 422 (and 400 for malformed JSON)', async () => {
      const repo = await makeRepo(t, alice);
      const ref = await patch(alice.name, repo.name, alice.token, { default_branch: 'bad..ref' }).expect(422);
      expect(ref.body.message).toBe('[DefaultBranch]: GitRefName');
      const description = await patch(alice.name, repo.name, alice.token, { description: 'x'.repeat(2049) }).expect(422);
      expect(description.body.message).toBe('[Description]: MaxSize');
      await t.http
        .patch(t.api(`/repos/${alice.name}/${repo.name}`))
        .set(withToken(alice.token))
        .set('Content-Type', 'application/json')
        .send('{oops')
        .expect(400);
    });

    it('checks lookup (404), sign-in (401) and permission (403) before the body', async () => {
      const repo = await makeRepo(t, alice);
      const hidden = await makeRepo(t, alice, { private: true });
      await patch(alice.name, hidden.name, bob.token, { description: 'x' }).expect(404);
      await patch(alice.name, hidden.name, undefined, { description: 'x' }).expect(404);
      const anonymous = await patch(alice.name, repo.name, undefined, { default_branch: 'bad..ref' }).expect(401);
      expect(anonymous.body.message).toBe('token is required');
      const refused = await patch(alice.name, repo.name, bob.token, { default_branch: 'bad..ref' }).expect(403);
      expect(refused.body.message).toBe('user should be an owner or a collaborator with admin write of a repository');
    });

    it('renames with name: row and directory move together, stars and watches stay, the old name is gone', async () => {
      const repo = await makeRepo(t, alice, { autoInit: true });
      await t.http
        .put(t.api(`/user/starred/${alice.name}/${repo.name}`))
        .set(withToken(bob.token))
        .expect(204);
      await t.http
        .put(t.api(`/repos/${alice.name}/${repo.name}/subscription`))
        .set(withToken(bob.token))
        .expect(200);
      const newName = uniqueName('Renamed');
      const response = await patch(alice.name, repo.name, alice.token, { name: newName, description: 'moved' }).expect(200);
      expect(response.body).toMatchObject({ id: repo.id, name: newName, full_name: `${alice.name}/${newName}`, description: 'moved' });
      expect(response.body.stars_count).toBe(1);
      expect(response.body.watchers_count).toBe(2);
      expect(response.body.clone_url).toContain(`/${alice.name}/${newName}.git`);
      await get(alice.name, repo.name).expect(404);
      expect((await get(alice.name, newName).expect(200)).body.id).toBe(repo.id);
      expect(fs.existsSync(repoDir(alice.name, repo.name))).toBe(false);
      expect(git(repoDir(alice.name, newName), 'log', '--format=%s').trim()).toBe('Initial commit');
      const starred = await t.http.get(t.api('/user/starred')).set(withToken(bob.token)).expect(200);
      expect(starred.body.map((r: { name: string }) => r.name)).toContain(newName);
      await t.http
        .get(t.api(`/repos/${alice.name}/${newName}/subscription`))
        .set(withToken(bob.token))
        .expect(200);
    });

    it('a rename that only changes letter case keeps the directory', async () => {
      const repo = await makeRepo(t, alice, { name: uniqueName('case') });
      const upper = repo.name.toUpperCase();
      const response = await patch(alice.name, repo.name, alice.token, { name: upper }).expect(200);
      expect(response.body.name).toBe(upper);
      expect(fs.existsSync(repoDir(alice.name, upper))).toBe(true);
    });

    it('refuses a clashing name (409), a reserved or malformed name (422), and changes nothing then', async () => {
      const repo = await makeRepo(t, alice, { description: 'before' });
      const other = await makeRepo(t, alice);
      const clash = await patch(alice.name, repo.name, alice.token, { name: other.name.toUpperCase(), description: 'after' }).expect(409);
      expect(clash.body.message).toBe('The repository with the same name already exists.');
      const reserved = await patch(alice.name, repo.name, alice.token, { name: 'x.git' }).expect(422);
      expect(reserved.body.message).toBe('name pattern is not allowed [pattern: *.git]');
      expect((await patch(alice.name, repo.name, alice.token, { name: '..' }).expect(422)).body.message).toBe('name is reserved [name: ..]');
      expect((await patch(alice.name, repo.name, alice.token, { name: 'a/b' }).expect(422)).body.message).toBe('[Name]: AlphaDashDot');
      expect((await patch(alice.name, repo.name, alice.token, { name: 'a'.repeat(101) }).expect(422)).body.message).toBe('[Name]: MaxSize');
      expect((await get(alice.name, repo.name, alice.token).expect(200)).body.description).toBe('before');
      expect(fs.existsSync(repoDir(alice.name, repo.name))).toBe(true);
      expect(fs.existsSync(repoDir(alice.name, other.name))).toBe(true);
    });

    it('a rename whose target directory holds stray files → 409, nothing moves, the row keeps its name', async () => {
      const repo = await makeRepo(t, alice);
      const target = uniqueName('taken');
      fs.mkdirSync(repoDir(alice.name, target), { recursive: true });
      fs.writeFileSync(`${repoDir(alice.name, target)}/not-a-repository`, 'x');
      const refused = await patch(alice.name, repo.name, alice.token, { name: target }).expect(409);
      expect(refused.body.message).toBe('The repository files already exist. Please contact the system administrator.');
      await get(alice.name, repo.name, alice.token).expect(200);
      await get(alice.name, target, alice.token).expect(404);
      expect(fs.existsSync(`${repoDir(alice.name, repo.name)}/HEAD`)).toBe(true);
    });

    it('lets org owners and site admins change organisation repositories', async () => {
      const repo = await makeRepo(t, alice, { org: org.name });
      await patch(org.name, repo.name, alice.token, { description: 'by owner' }).expect(200);
      const byAdmin = await patch(org.name, repo.name, admin.token, { description: 'by admin' }).expect(200);
      expect(byAdmin.body.description).toBe('by admin');
      await patch(org.name, repo.name, bob.token, { description: 'x' }).expect(403);
    });
  });

  describe('DELETE /repos/{owner}/{repo}', () => {
    const remove = (owner: string, name: string, token?: string) => {
      const request = t.http.delete(t.api(`/repos/${owner}/${name}`));
      return token ? request.set(withToken(token)) : request;
    };

    it('removes the row, the directory, stars and watches, and fixes the counters', async () => {
      const repo = await makeRepo(t, alice, { autoInit: true });
      const dir = repoDir(alice.name, repo.name);
      expect(fs.existsSync(dir)).toBe(true);
      await t.http
        .put(t.api(`/user/starred/${alice.name}/${repo.name}`))
        .set(withToken(bob.token))
        .expect(204);
      const bobStars = async () => (await t.http.get(t.api('/user')).set(withToken(bob.token))).body.starred_repos_count;
      const starsBefore = await bobStars();
      const before = await numRepos(alice.user.id);
      const response = await remove(alice.name, repo.name, alice.token).expect(204);
      expect(response.text).toBe('');
      expect(fs.existsSync(dir)).toBe(false);
      await get(alice.name, repo.name, alice.token).expect(404);
      expect(await numRepos(alice.user.id)).toBe(before - 1);
      expect(await bobStars()).toBe(starsBefore - 1);
      const leftovers = await t.dataSource.query(
        `SELECT (SELECT COUNT(*) FROM star WHERE repo_id = ${repo.id}) AS stars, (SELECT COUNT(*) FROM watch WHERE repo_id = ${repo.id}) AS watches`,
      );
      expect(Number(leftovers[0].stars) + Number(leftovers[0].watches)).toBe(0);
      await remove(alice.name, repo.name, alice.token).expect(404);
      // The name is free again.
      await makeRepo(t, alice, { name: repo.name });
    });

    it('refuses other users with 403, anonymous callers with 401, and hides private repositories (404)', async () => {
      const repo = await makeRepo(t, alice);
      const refused = await remove(alice.name, repo.name, bob.token).expect(403);
      expect(refused.body.message).toBe('user should be the owner of the repo');
      await remove(alice.name, repo.name).expect(401);
      const hidden = await makeRepo(t, alice, { private: true });
      await remove(alice.name, hidden.name, bob.token).expect(404);
      const readOnly = await makeToken(t, alice.user, ['read:repository']);
      const scoped = await remove(alice.name, repo.name, readOnly).expect(403);
      expect(scoped.body.message).toBe('token does not have at least one of required scope(s): [write:repository]');
      await get(alice.name, repo.name).expect(200);
    });

    it('lets an org owner and a site admin delete', async () => {
      const orgRepo = await makeRepo(t, alice, { org: org.name });
      await remove(org.name, orgRepo.name, alice.token).expect(204);
      expect(fs.existsSync(repoDir(org.name, orgRepo.name))).toBe(false);
      const bobsRepo = await makeRepo(t, bob);
      await remove(bob.name, bobsRepo.name, admin.token).expect(204);
      expect(fs.existsSync(repoDir(bob.name, bobsRepo.name))).toBe(false);
    });

    it('a user who owns repositories cannot be deleted; once they are gone, the user can be', async () => {
      const erin = await makeUser(t);
      const repo = await makeRepo(t, erin);
      await t.http
        .delete(t.api(`/admin/users/${erin.name}`))
        .set(withToken(admin.token))
        .expect(422);
      await remove(erin.name, repo.name, erin.token).expect(204);
      expect(await numRepos(erin.user.id)).toBe(0);
      await t.http
        .delete(t.api(`/admin/users/${erin.name}`))
        .set(withToken(admin.token))
        .expect(204);
    });
  });

  it('creates the same names under different owners in separate directories', async () => {
    const name = uniqueName('shared');
    await makeRepo(t, alice, { name });
    await makeRepo(t, bob, { name: name.toUpperCase() });
    expect(fs.existsSync(repoDir(alice.name, name))).toBe(true);
    expect(fs.existsSync(repoDir(bob.name, name))).toBe(true);
  });
});
