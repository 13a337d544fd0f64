import { makeOrg, makeToken, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

describe('follows: /user/followers, /user/following, /users/{username}/followers|following', () => {
  let t: TestApp;
  let admin: TestUser;

  const patch = (name: string, body: Record<string, unknown>) =>
    t.http
      .patch(t.api(`/admin/users/${name}`))
      .set(withToken(admin.token))
      .send(body)
      .expect(200);
  const follow = (who: TestUser, target: string) => t.http.put(t.api(`/user/following/${target}`)).set(withToken(who.token));
  const unfollow = (who: TestUser, target: string) => t.http.delete(t.api(`/user/following/${target}`)).set(withToken(who.token));
  const logins = (body: { login: string }[]) => body.map((user) => user.login);
  const profile = async (name: string) =>
    (
      await t.http
        .get(t.api(`/users/${name}`))
        .set(withToken(admin.token))
        .expect(200)
    ).body;

  beforeAll(async () => {
    t = await startTestApp();
    admin = await makeUser(t, { admin: true });
  });
  afterAll(() => t.close());

  describe('PUT, GET and DELETE /user/following/{username}', () => {
    it('follows, checks and unfollows, moving both counters exactly once', async () => {
      const fan = await makeUser(t);
      const star = await makeUser(t);
      await t.http
        .get(t.api(`/user/following/${star.name}`))
        .set(withToken(fan.token))
        .expect(404);
      const put = await follow(fan, star.name).expect(204);
      expect(put.text).toBe('');
      await follow(fan, star.name.toUpperCase()).expect(204);
      await t.http
        .get(t.api(`/user/following/${star.name}`))
        .set(withToken(fan.token))
        .expect(204);
      expect((await profile(star.name)).followers_count).toBe(1);
      expect((await profile(fan.name)).following_count).toBe(1);
      await unfollow(fan, star.name).expect(204);
      await unfollow(fan, star.name).expect(204);
      await t.http
        .get(t.api(`/user/following/${star.name}`))
        .set(withToken(fan.token))
        .expect(404);
      expect((await profile(star.name)).followers_count).toBe(0);
      expect((await profile(fan.name)).following_count).toBe(0);
    });

    it('treats following and unfollowing yourself as a no-op 204, and never reports you as followed', async () => {
      const me = await makeUser(t);
      await follow(me, me.name).expect(204);
      await t.http
        .get(t.api(`/user/following/${me.name}`))
        .set(withToken(me.token))
        .expect(404);
      await unfollow(me, me.name).expect(204);
      const self = await profile(me.name);
      expect([self.followers_count, self.following_count]).toEqual([0, 0]);
    });

    it('answers 404 for an unknown user on GET, PUT and DELETE', async () => {
      const me = await makeUser(t);
      await t.http.get(t.api('/user/following/nobody-here')).set(withToken(me.token)).expect(404);
      await follow(me, 'nobody-here').expect(404);
      await unfollow(me, 'nobody-here').expect(404);
    });

    it('follows organisations', async () => {
      const me = await makeUser(t);
      const org = await makeOrg(t, admin.user);
      await follow(me, org.name).expect(204);
      await t.http
        .get(t.api(`/user/following/${org.name}`))
        .set(withToken(me.token))
        .expect(204);
      expect((await profile(org.name)).followers_count).toBe(1);
      const following = await t.http.get(t.api('/user/following')).set(withToken(me.token)).expect(200);
      expect(logins(following.body)).toEqual([org.name]);
    });

    it('treats a private user the caller cannot see as unknown, unless that user follows the caller', async () => {
      const me = await makeUser(t);
      const hidden = await makeUser(t, { visibility: 'private' });
      await follow(me, hidden.name).expect(404);
      await unfollow(me, hidden.name).expect(404);
      await follow(hidden, me.name).expect(204);
      await follow(me, hidden.name).expect(204);
      await t.http
        .get(t.api(`/user/following/${hidden.name}`))
        .set(withToken(me.token))
        .expect(204);
    });

    it('lets any unrestricted caller follow a limited user, and a restricted caller only one who follows them', async () => {
      const limited = await makeUser(t, { visibility: 'limited' });
      const me = await makeUser(t);
      await follow(me, limited.name).expect(204);
      const restricted = await makeUser(t);
      await patch(restricted.name, { restricted: true });
      await follow(restricted, limited.name).expect(404);
      await follow(limited, restricted.name).expect(204);
      await follow(restricted, limited.name).expect(204);
      expect((await profile(limited.name)).followers_count).toBe(2);
      expect((await profile(restricted.name)).following_count).toBe(1);
    });

    it('still lets a caller unfollow a user who became invisible to them', async () => {
      const me = await makeUser(t);
      const shy = await makeUser(t);
      await follow(me, shy.name).expect(204);
      await patch(shy.name, { visibility: 'private' });
      await t.http
        .get(t.api(`/user/following/${shy.name}`))
        .set(withToken(me.token))
        .expect(404);
      await unfollow(me, shy.name).expect(204);
      expect((await profile(shy.name)).followers_count).toBe(0);
    });

    it('answers a public-only token 403 on a non-public user', async () => {
      const me = await makeUser(t);
      const limited = await makeUser(t, { visibility: 'limited' });
      const token = await makeToken(t, me.user, ['public-only', 'write:user']);
      const response = await t.http
        .put(t.api(`/user/following/${limited.name}`))
        .set(withToken(token))
        .expect(403);
      expect(response.body.message).toBe('token scope is limited to public users');
      await t.http
        .put(t.api(`/user/following/${admin.name}`))
        .set(withToken(token))
        .expect(204);
    });

    it('answers anonymous callers 401 and tokens without the scope 403', async () => {
      const me = await makeUser(t);
      expect((await t.http.put(t.api(`/user/following/${me.name}`)).expect(401)).body.message).toBe('token is required');
      await t.http.get(t.api(`/user/following/${me.name}`)).expect(401);
      await t.http.delete(t.api(`/user/following/${me.name}`)).expect(401);
      const readOnly = await makeToken(t, me.user, ['read:user']);
      const put = await t.http
        .put(t.api(`/user/following/${admin.name}`))
        .set(withToken(readOnly))
        .expect(403);
      expect(put.body.message).toBe('token does not have at least one of required scope(s): [write:user]');
      const repoOnly = await makeToken(t, me.user, ['read:repository']);
      const get = await t.http
        .get(t.api(`/user/following/${admin.name}`))
        .set(withToken(repoOnly))
        .expect(403);
      expect(get.body.message).toBe('token does not have at least one of required scope(s): [read:user]');
    });
  });

  describe('GET /user/followers and /user/following', () => {
    it('lists followers (individuals) and following (users and organisations) in follow order, paged', async () => {
      const me = await makeUser(t);
      const fans = [await makeUser(t), await makeUser(t), await makeUser(t)];
      for (const fan of fans) await follow(fan, me.name).expect(204);
      const first = await t.http.get(t.api('/user/followers?limit=2')).set(withToken(me.token)).expect(200);
      expect(logins(first.body)).toEqual([fans[0].name, fans[1].name]);
      expect(first.headers['x-total-count']).toBe('3');
      expect(first.headers.link).toBe(
        '<http://anvil.test/api/v1/user/followers?limit=2&page=2>; rel="next",<http://anvil.test/api/v1/user/followers?limit=2&page=2>; rel="last"',
      );
      const second = await t.http.get(t.api('/user/followers?limit=2&page=2')).set(withToken(me.token)).expect(200);
      expect(logins(second.body)).toEqual([fans[2].name]);
      const org = await makeOrg(t, admin.user);
      await follow(me, fans[1].name).expect(204);
      await follow(me, org.name).expect(204);
      const following = await t.http.get(t.api('/user/following')).set(withToken(me.token)).expect(200);
      expect(logins(following.body)).toEqual([fans[1].name, org.name]);
      expect(following.headers['x-total-count']).toBe('2');
      expect(following.headers.link).toBeUndefined();
    });

    it('answers anonymous callers 401', async () => {
      await t.http.get(t.api('/user/followers')).expect(401);
      await t.http.get(t.api('/user/following')).expect(401);
    });

    it('answers a token without read:user 403', async () => {
      const me = await makeUser(t);
      const token = await makeToken(t, me.user, ['read:repository']);
      await t.http.get(t.api('/user/followers')).set(withToken(token)).expect(403);
    });
  });

  describe('list visibility', () => {
    let target: TestUser;
    let viewer: TestUser;
    let publicFan: TestUser;
    let limitedFan: TestUser;
    let privateFan: TestUser;
    let coMember: TestUser;

    beforeAll(async () => {
      target = await makeUser(t);
      viewer = await makeUser(t);
      publicFan = await makeUser(t);
      limitedFan = await makeUser(t, { visibility: 'limited' });
      privateFan = await makeUser(t, { visibility: 'private' });
      coMember = await makeUser(t, { visibility: 'private' });
      for (const fan of [publicFan, limitedFan, privateFan]) await follow(fan, target.name).expect(204);
      // coMember shares an organisation with viewer and can follow target, whom it can see.
      const shared = await makeOrg(t, viewer.user);
      const team = (
        await t.http
          .get(t.api(`/orgs/${shared.name}/teams`))
          .set(withToken(viewer.token))
          .expect(200)
      ).body[0];
      await t.http
        .put(t.api(`/teams/${team.id}/members/${coMember.name}`))
        .set(withToken(admin.token))
        .expect(204);
      await follow(coMember, target.name).expect(204);
      await follow(admin, target.name).expect(204);
    });

    it('shows another signed-in user public and limited followers only', async () => {
      const stranger = await makeUser(t);
      const response = await t.http
        .get(t.api(`/users/${target.name}/followers`))
        .set(withToken(stranger.token))
        .expect(200);
      expect(logins(response.body)).toEqual([publicFan.name, limitedFan.name, admin.name]);
      expect(response.headers['x-total-count']).toBe('3');
    });

    it('adds private users who share an organisation with the caller', async () => {
      const response = await t.http
        .get(t.api(`/users/${target.name}/followers`))
        .set(withToken(viewer.token))
        .expect(200);
      expect(logins(response.body)).toEqual([publicFan.name, limitedFan.name, coMember.name, admin.name]);
    });

    it('adds private users who follow the caller', async () => {
      const response = await t.http.get(t.api('/user/followers')).set(withToken(target.token)).expect(200);
      expect(logins(response.body)).toEqual([publicFan.name, limitedFan.name, privateFan.name, coMember.name, admin.name]);
      expect(response.headers['x-total-count']).toBe('5');
    });

    it('shows site admins everyone', async () => {
      const response = await t.http
        .get(t.api(`/users/${target.name}/followers`))
        .set(withToken(admin.token))
        .expect(200);
      expect(response.headers['x-total-count']).toBe('5');
    });

    it('shows a public-only token public users only', async () => {
      const token = await makeToken(t, target.user, ['public-only', 'read:user']);
      const response = await t.http.get(t.api('/user/followers')).set(withToken(token)).expect(200);
      expect(logins(response.body)).toEqual([publicFan.name, admin.name]);
    });

    it('hides a limited user from a restricted caller', async () => {
      const restricted = await makeUser(t);
      await patch(restricted.name, { restricted: true });
      const response = await t.http
        .get(t.api(`/users/${target.name}/followers`))
        .set(withToken(restricted.token))
        .expect(200);
      expect(logins(response.body)).toEqual([publicFan.name, admin.name]);
    });

    it('lists a private organisation in following only for its members and site admins', async () => {
      const member = await makeUser(t);
      const org = await makeOrg(t, member.user, { visibility: 'private' });
      await follow(member, org.name).expect(204);
      const stranger = await makeUser(t);
      expect(
        (
          await t.http
            .get(t.api(`/users/${member.name}/following`))
            .set(withToken(stranger.token))
            .expect(200)
        ).body,
      ).toEqual([]);
      const own = await t.http.get(t.api('/user/following')).set(withToken(member.token)).expect(200);
      expect(logins(own.body)).toEqual([org.name]);
      const byAdmin = await t.http
        .get(t.api(`/users/${member.name}/following`))
        .set(withToken(admin.token))
        .expect(200);
      expect(logins(byAdmin.body)).toEqual([org.name]);
    });

    it('treats a private organisation as unknown to a non-member who tries to follow it', async () => {
      const org = await makeOrg(t, admin.user, { visibility: 'private' });
      await follow(target, org.name).expect(404);
      await follow(admin, org.name).expect(204);
    });
  });

  describe('GET /users/{username}/followers|following|following/{target} (users group B)', () => {
    it('lists another user’s followers and following', async () => {
      const someone = await makeUser(t);
      const fan = await makeUser(t);
      const idol = await makeUser(t);
      await follow(fan, someone.name).expect(204);
      await follow(someone, idol.name).expect(204);
      const viewer = await makeUser(t);
      const followers = await t.http
        .get(t.api(`/users/${someone.name}/followers`))
        .set(withToken(viewer.token))
        .expect(200);
      expect(logins(followers.body)).toEqual([fan.name]);
      expect(followers.body[0].email).toBe(fan.email);
      const following = await t.http
        .get(t.api(`/users/${someone.name.toUpperCase()}/following`))
        .set(withToken(viewer.token))
        .expect(200);
      expect(logins(following.body)).toEqual([idol.name]);
      await t.http
        .get(t.api(`/users/${someone.name}/following/${idol.name}`))
        .set(withToken(viewer.token))
        .expect(204);
      await t.http
        .get(t.api(`/users/${someone.name}/following/${fan.name}`))
        .set(withToken(viewer.token))
        .expect(404);
      await t.http
        .get(t.api(`/users/${someone.name}/following/nobody-here`))
        .set(withToken(viewer.token))
        .expect(404);
    });

    it('lists followers of an organisation', async () => {
      const fan = await makeUser(t);
      const org = await makeOrg(t, admin.user);
      await follow(fan, org.name).expect(204);
      const response = await t.http
        .get(t.api(`/users/${org.name}/followers`))
        .set(withToken(fan.token))
        .expect(200);
      expect(logins(response.body)).toEqual([fan.name]);
    });

    it('answers anonymous callers 401 before looking the user up', async () => {
      for (const path of ['/users/nobody-here/followers', '/users/nobody-here/following', '/users/nobody-here/following/x']) {
        expect((await t.http.get(t.api(path)).expect(401)).body.message).toBe('token is required');
      }
    });

    it('answers 404 for an unknown user', async () => {
      const viewer = await makeUser(t);
      await t.http.get(t.api('/users/nobody-here/followers')).set(withToken(viewer.token)).expect(404);
      await t.http.get(t.api('/users/nobody-here/following')).set(withToken(viewer.token)).expect(404);
      await t.http
        .get(t.api(`/users/nobody-here/following/${viewer.name}`))
        .set(withToken(viewer.token))
        .expect(404);
    });

    it('applies the individual visibility check to {username}: a private user is 404 except for themselves and admins', async () => {
      const hidden = await makeUser(t, { visibility: 'private' });
      const viewer = await makeUser(t);
      await follow(hidden, viewer.name).expect(204);
      await t.http
        .get(t.api(`/users/${hidden.name}/following`))
        .set(withToken(viewer.token))
        .expect(404);
      await t.http
        .get(t.api(`/users/${hidden.name}/followers`))
        .set(withToken(viewer.token))
        .expect(404);
      await t.http
        .get(t.api(`/users/${hidden.name}/following/${viewer.name}`))
        .set(withToken(viewer.token))
        .expect(404);
      await t.http
        .get(t.api(`/users/${hidden.name}/following`))
        .set(withToken(hidden.token))
        .expect(200);
      await t.http
        .get(t.api(`/users/${hidden.name}/following/${viewer.name}`))
        .set(withToken(admin.token))
        .expect(204);
    });

    it('answers a public-only token 403 on a non-public {username}', async () => {
      const limited = await makeUser(t, { visibility: 'limited' });
      const token = await makeToken(t, admin.user, ['public-only', 'read:user']);
      const response = await t.http
        .get(t.api(`/users/${limited.name}/followers`))
        .set(withToken(token))
        .expect(403);
      expect(response.body.message).toBe('token scope is limited to public users');
    });

    it('answers a token without read:user 403 before anything else', async () => {
      const viewer = await makeUser(t);
      const token = await makeToken(t, viewer.user, ['read:repository']);
      await t.http.get(t.api('/users/nobody-here/followers')).set(withToken(token)).expect(403);
    });
  });

  describe('deleting a user', () => {
    it('removes their follows and fixes the counters on the other side', async () => {
      const leaving = await makeUser(t);
      const idol = await makeUser(t);
      const fan = await makeUser(t);
      await follow(leaving, idol.name).expect(204);
      await follow(fan, leaving.name).expect(204);
      await t.http
        .delete(t.api(`/admin/users/${leaving.name}`))
        .set(withToken(admin.token))
        .expect(204);
      expect((await profile(idol.name)).followers_count).toBe(0);
      expect((await profile(fan.name)).following_count).toBe(0);
      expect((await t.http.get(t.api('/user/following')).set(withToken(fan.token)).expect(200)).body).toEqual([]);
    });
  });

  describe('concurrency', () => {
    it('keeps both counters equal to the number of rows under 40 parallel follow/unfollow requests', async () => {
      const target = await makeUser(t);
      const fans = await Promise.all(Array.from({ length: 8 }, () => makeUser(t)));
      const requests = Array.from({ length: 40 }, (_, i) => {
        const fan = fans[i % fans.length];
        return i % 3 === 2 ? unfollow(fan, target.name).expect(204) : follow(fan, target.name).expect(204);
      });
      // Opposite follows between the fans too, so that two transactions touch the same two rows in both orders.
      requests.push(follow(fans[0], fans[1].name).expect(204), follow(fans[1], fans[0].name).expect(204));
      await Promise.all(requests);
      const followers = await t.http
        .get(t.api(`/users/${target.name}/followers`))
        .set(withToken(admin.token))
        .expect(200);
      expect((await profile(target.name)).followers_count).toBe(Number(followers.headers['x-total-count']));
      for (const fan of fans) {
        const following = await t.http
          .get(t.api(`/users/${fan.name}/following`))
          .set(withToken(admin.token))
          .expect(200);
        const fanProfile = await profile(fan.name);
        expect(fanProfile.following_count).toBe(Number(following.headers['x-total-count']));
        const followersOfFan = await t.http
          .get(t.api(`/users/${fan.name}/followers`))
          .set(withToken(admin.token))
          .expect(200);
        expect(fanProfile.followers_count).toBe(Number(followersOfFan.headers['x-total-count']));
      }
    });
  });
});
