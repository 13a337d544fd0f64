import { generateKeyPairSync, randomBytes } from 'node:crypto';
import * as openpgp from 'openpgp';
import * as sshpk from 'sshpk';
import { CAPS } from '../../src/common/caps';
import { MAX_KEYS_PER_USER } from '../../src/keys/key-owners';
import { CommitStatusEntity } from '../../src/statuses/commit-status.entity';
import { RepositoryTemplates } from '../../src/repos/templates/repository-templates';
import { makeOrg, makeRepo, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { git, repositoryDir } from '../support/git';
import { startTestApp, TestApp } from '../support/test-app';

/** Caps on untrusted sizes and validation of untrusted values. */
describe('caps and validation', () => {
  let t: TestApp;
  let alice: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await makeUser(t);
  });
  afterAll(() => t.close());

  const sshLine = (comment = 'k') => {
    const { publicKey } = generateKeyPairSync('ed25519');
    return `${sshpk.parseKey(publicKey.export({ type: 'spki', format: 'pem' }) as string, 'pem').toString('ssh')} ${comment}`;
  };

  it('2: repeated gitignore names count once, the list has a size cap, and more than 32 distinct names are refused', async () => {
    const create = (gitignores: string) =>
      t.http
        .post(t.api('/user/repos'))
        .set(withToken(alice.token))
        .send({ name: uniqueName('gi'), auto_init: true, gitignores });
    // The reported attack: 8 000 copies in a 56 KB body.
    expect((await create(Array.from({ length: 8000 }, () => 'Joomla').join(',')).expect(422)).body.message).toBe('[Gitignores]: MaxSize');
    const repeated = await create(Array.from({ length: 500 }, () => 'Joomla').join(',')).expect(201);
    const gitignore = git(repositoryDir(t.dataDir, alice.name, repeated.body.name), 'show', 'HEAD:.gitignore');
    const single = git(repositoryDir(t.dataDir, alice.name, (await create('Joomla').expect(201)).body.name), 'show', 'HEAD:.gitignore');
    expect(gitignore).toBe(single);
    const names = t.app.get(RepositoryTemplates).gitignoreNames();
    expect((await create(names.slice(0, 33).join(',')).expect(422)).body.message).toBe('too many gitignore templates: at most 32');
  });

  it('8: too many search terms are a 422 naming the cap, never a 500 with the database message', async () => {
    const terms = Array.from({ length: 1100 }, (_, index) => `t${index}`).join(',');
    const response = await t.http
      .get(t.api('/repos/search'))
      .query({ q: terms.slice(0, 1000) })
      .expect(422);
    expect(response.body.message).toBe('too many search terms: at most 32');
    await t.http.get(t.api('/repos/search')).query({ q: terms }).expect(422);
  });

  it('9: starredBy and uid of a user the caller cannot see yield nothing', async () => {
    const hidden = await makeUser(t, { visibility: 'private' });
    const org = await makeOrg(t, hidden.user);
    const repo = await makeRepo(t, alice, { name: uniqueName('starred') });
    await makeRepo(t, hidden, { name: uniqueName('orgrepo'), org: org.name });
    await t.http
      .put(t.api(`/user/starred/${alice.name}/${repo.name}`))
      .set(withToken(hidden.token))
      .expect(204);
    const stranger = await makeUser(t);
    for (const token of [undefined, stranger.token]) {
      for (const query of [{ starredBy: hidden.user.id }, { uid: hidden.user.id }]) {
        const request = t.http.get(t.api('/repos/search')).query(query);
        const response = await (token ? request.set(withToken(token)) : request).expect(200);
        expect(response.body.data).toEqual([]);
      }
    }
    // The user themselves still sees both.
    expect((await t.http.get(t.api('/repos/search')).query({ starredBy: hidden.user.id }).set(withToken(hidden.token)).expect(200)).body.data).toHaveLength(1);
    expect((await t.http.get(t.api('/repos/search')).query({ uid: hidden.user.id }).set(withToken(hidden.token)).expect(200)).body.data.length).toBeGreaterThan(
      0,
    );
  });

  it('9: priority_owner_id naming a user the caller cannot see changes nothing, not even the order', async () => {
    const keyword = uniqueName('prio');
    const hidden = await makeUser(t, { visibility: 'private' });
    const hiddenOrg = await makeOrg(t, hidden.user, { visibility: 'private' });
    // Public repositories whose names sort last, under a private user and a private organisation.
    await makeRepo(t, hidden, { name: `zz-${keyword}` });
    await makeRepo(t, hidden, { name: `zy-${keyword}`, org: hiddenOrg.name });
    for (const prefix of ['aa', 'ab', 'ac']) await makeRepo(t, alice, { name: `${prefix}-${keyword}` });
    const stranger = await makeUser(t);
    const search = (query: Record<string, unknown>, token?: string) => {
      const request = t.http.get(t.api('/repos/search')).query({ q: keyword, ...query });
      return (token ? request.set(withToken(token)) : request).expect(200);
    };
    const names = (body: { data: { name: string }[] }) => body.data.map((repo) => repo.name);
    for (const token of [undefined, stranger.token]) {
      const plain = await search({}, token);
      expect(names(plain.body)).toEqual([`aa-${keyword}`, `ab-${keyword}`, `ac-${keyword}`]);
      for (const id of [hidden.user.id, hiddenOrg.id]) {
        const prioritised = await search({ priority_owner_id: id }, token);
        expect(prioritised.body).toEqual(plain.body);
        expect(prioritised.headers['x-total-count']).toBe(plain.headers['x-total-count']);
      }
    }
    // The parameter works for whoever may see that user: their repository comes first.
    expect(names((await search({ priority_owner_id: hidden.user.id }, hidden.token)).body)[0]).toBe(`zz-${keyword}`);
  });

  it('10: a repository website must be an http(s) URL', async () => {
    const repo = await makeRepo(t, alice, { name: uniqueName('web') });
    const path = t.api(`/repos/${alice.name}/${repo.name}`);
    for (const website of ['javascript:alert(1)', 'JavaScript:alert(1)', 'data:text/html,x', 'vbscript:x']) {
      expect((await t.http.patch(path).set(withToken(alice.token)).send({ website }).expect(422)).body.message).toBe('[Website]: ValidUrl');
    }
    expect((await t.http.patch(path).set(withToken(alice.token)).send({ website: 'https://example.org/' }).expect(200)).body.website).toBe(
      'https://example.org/',
    );
  });

  it('11: a full name git refuses as an author name still gets its auto_init commit', async () => {
    for (const fullName of ['.', ' , ', '"\'']) {
      const odd = await makeUser(t, { fullName });
      await t.http
        .post(t.api('/user/repos'))
        .set(withToken(odd.token))
        .send({ name: uniqueName('init'), auto_init: true })
        .expect(201);
    }
  });

  it('12: a user holds at most the cap of SSH keys, and comments are short', async () => {
    const holder = await makeUser(t);
    for (let index = 0; index < MAX_KEYS_PER_USER; index++) {
      await t.http
        .post(t.api('/user/keys'))
        .set(withToken(holder.token))
        .send({ title: `k${index}`, key: sshLine() })
        .expect(201);
    }
    const over = await t.http.post(t.api('/user/keys')).set(withToken(holder.token)).send({ title: 'one-more', key: sshLine() }).expect(422);
    expect(over.body.message).toBe('too many keys: a user may hold at most 100 keys of a kind');
    const long = await t.http
      .post(t.api('/user/keys'))
      .set(withToken(alice.token))
      .send({ title: 'long', key: sshLine('c'.repeat(32_000)) })
      .expect(422);
    expect(long.body.message).toBe('Invalid key content: the key comment is too long');
  });

  it('12: a user holds at most the cap of GPG primary keys, however the uploads are batched', async () => {
    const holder = await makeUser(t);
    const keys = await Promise.all(
      Array.from({ length: MAX_KEYS_PER_USER + 8 }, () =>
        openpgp.generateKey({ type: 'ecc', curve: 'ed25519Legacy', userIDs: [{ email: holder.email }], format: 'object' }),
      ),
    );
    // Several keys in one armor block (the policy allows 8 per upload): fewer requests, and the cap must count
    // every key of an upload, not the upload.
    const armor = (batch: typeof keys) =>
      openpgp.armor(openpgp.enums.armor.publicKey, Buffer.concat(batch.map(({ publicKey }) => Buffer.from(publicKey.write()))));
    const upload = (batch: typeof keys) =>
      t.http
        .post(t.api('/user/gpg_keys'))
        .set(withToken(holder.token))
        .send({ armored_public_key: armor(batch) });
    for (let start = 0; start < MAX_KEYS_PER_USER - 4; start += 8) await upload(keys.slice(start, start + 8)).expect(201);
    const overByBatch = await upload(keys.slice(MAX_KEYS_PER_USER - 4, MAX_KEYS_PER_USER + 4)).expect(422);
    expect(overByBatch.body.message).toBe('too many keys: a user may hold at most 100 keys of a kind');
    await upload(keys.slice(MAX_KEYS_PER_USER - 4, MAX_KEYS_PER_USER)).expect(201);
    const over = await upload(keys.slice(MAX_KEYS_PER_USER, MAX_KEYS_PER_USER + 1)).expect(422);
    expect(over.body.message).toBe('too many keys: a user may hold at most 100 keys of a kind');
    const listed = await t.http.get(t.api('/user/gpg_keys')).query({ limit: 50, page: 3 }).set(withToken(holder.token)).expect(200);
    expect(listed.headers['x-total-count']).toBe(String(MAX_KEYS_PER_USER));
  });

  it('16: an RSA key over 16 384 bits is refused', async () => {
    const blob = (bits: number) => {
      const put = (data: Buffer) => {
        const length = Buffer.alloc(4);
        length.writeUInt32BE(data.length);
        return Buffer.concat([length, data]);
      };
      const n = randomBytes(bits / 8);
      n[0] |= 0x80;
      n[n.length - 1] |= 1;
      return Buffer.concat([put(Buffer.from('ssh-rsa')), put(Buffer.from([1, 0, 1])), put(Buffer.concat([Buffer.from([0]), n]))]).toString('base64');
    };
    const response = await t.http
      .post(t.api('/user/keys'))
      .set(withToken(alice.token))
      .send({ title: 'huge', key: `ssh-rsa ${blob(16384 + 1024)}` })
      .expect(422);
    expect(response.body.message).toBe('Invalid key content: key is too large: got 17408 bits, at most 16384');
  });

  it('red team 3: webhooks are capped per repository and per owner, with bounded URLs and secrets', async () => {
    const owner = await makeUser(t);
    const repo = await makeRepo(t, owner);
    const hook = (place: string, config: Record<string, string> = {}) =>
      t.http
        .post(t.api(`${place}/hooks`))
        .set(withToken(owner.token))
        .send({ type: 'forgejo', config: { url: 'https://hooks.example.com/in', content_type: 'json', ...config } });
    const place = `/repos/${owner.name}/${repo.name}`;
    expect((await hook(place, { url: `https://hooks.example.com/${'u'.repeat(CAPS.hookUrlLength)}` }).expect(422)).body.message).toContain('Invalid url');
    expect((await hook(place, { secret: 's'.repeat(CAPS.hookSecretLength + 1) }).expect(422)).body.message).toContain('secret is too long');
    const created = (await hook(place, { secret: 's'.repeat(CAPS.hookSecretLength) }).expect(201)).body;
    const edited = await t.http
      .patch(t.api(`${place}/hooks/${created.id}`))
      .set(withToken(owner.token))
      .send({ config: { secret: 'x'.repeat(CAPS.hookSecretLength + 1) } });
    expect(edited.status).toBe(422);
    for (let index = 1; index < CAPS.hooksPerRepository; index++) await hook(place).expect(201);
    expect((await hook(place).expect(422)).body.message).toBe(`too many webhooks: a repository may have at most ${CAPS.hooksPerRepository}`);
    const listed = await t.http
      .get(t.api(`${place}/hooks`))
      .set(withToken(owner.token))
      .expect(200);
    expect(listed.headers['x-total-count']).toBe(String(CAPS.hooksPerRepository));
    // The owner's own hooks have a budget of their own; another repository is not affected.
    await makeRepo(t, owner).then((other) => hook(`/repos/${owner.name}/${other.name}`).expect(201));
    for (let index = 0; index < CAPS.hooksPerOwner; index++) await hook('/user').expect(201);
    expect((await hook('/user').expect(422)).body.message).toBe(`too many webhooks: a user or organization may have at most ${CAPS.hooksPerOwner}`);
  });

  it('red team 3: statuses per commit, OAuth2 applications per user and teams per organisation are capped', async () => {
    const owner = await makeUser(t);
    const repo = await makeRepo(t, owner, { autoInit: true });
    const place = `/repos/${owner.name}/${repo.name}`;
    const sha = (
      await t.http
        .get(t.api(`${place}/branches/${repo.default_branch}`))
        .set(withToken(owner.token))
        .expect(200)
    ).body.commit.id as string;
    const status = () =>
      t.http
        .post(t.api(`${place}/statuses/${sha}`))
        .set(withToken(owner.token))
        .send({ state: 'success', context: 'ci' });
    await status().expect(201);
    // Statuses up to the cap are seeded in the table: the cap is about what the API accepts next.
    const rows = Array.from({ length: CAPS.statusesPerCommit - 2 }, (_, index) => ({
      repoId: repo.id as number,
      sha,
      state: 'pending',
      targetUrl: '',
      description: '',
      context: `seeded-${index}`,
      creatorId: owner.user.id,
      createdUnix: 1,
      updatedUnix: 1,
    }));
    for (let start = 0; start < rows.length; start += 200) await t.dataSource.getRepository(CommitStatusEntity).insert(rows.slice(start, start + 200));
    await status().expect(201);
    expect((await status().expect(422)).body.message).toBe(`too many statuses: a commit may have at most ${CAPS.statusesPerCommit}`);

    const application = () =>
      t.http
        .post(t.api('/user/applications/oauth2'))
        .set(withToken(owner.token))
        .send({ name: uniqueName('app'), redirect_uris: ['https://ci.example.com/cb'] });
    for (let index = 0; index < CAPS.oauth2ApplicationsPerUser; index++) await application().expect(201);
    expect((await application().expect(422)).body.message).toBe(`too many OAuth2 applications: a user may have at most ${CAPS.oauth2ApplicationsPerUser}`);

    const org = await makeOrg(t, owner.user);
    const team = () =>
      t.http
        .post(t.api(`/orgs/${org.name}/teams`))
        .set(withToken(owner.token))
        .send({ name: uniqueName('team'), units_map: { 'repo.code': 'read' } });
    // The organisation starts with its Owners team.
    const existing = Number(
      (
        await t.http
          .get(t.api(`/orgs/${org.name}/teams`))
          .set(withToken(owner.token))
          .expect(200)
      ).headers['x-total-count'],
    );
    for (let index = existing; index < CAPS.teamsPerOrganization; index++) await team().expect(201);
    expect((await team().expect(422)).body.message).toBe(`too many teams: an organization may have at most ${CAPS.teamsPerOrganization}`);
  });
});
