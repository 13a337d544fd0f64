import { createHash, randomBytes } from 'node:crypto';
import { makeRepo, makeUser, TestUser, uniqueName, withBasic, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';
import { pointerFile } from '../../src/lfs/lfs-pointer';

const LFS = 'application/vnd.git-lfs+json';

function sha256(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/** A migration with `lfs: true` from a second Anvil instance, which serves the source and its LFS objects. */
describe("migrations bring LFS objects from the source's LFS server", () => {
  jest.setTimeout(120_000);
  let source: TestApp;
  let target: TestApp;
  let sourceBase: string;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    source = await startTestApp();
    sourceBase = await source.listen();
    // The batch answers' links must reach this instance.
    source.config.rootUrl = sourceBase;
    target = await startTestApp({ ALLOW_LOCAL_NETWORKS: 'true' });
    alice = await makeUser(source);
    bob = await makeUser(target);
  });
  afterAll(async () => {
    await target?.close();
    await source?.close();
  });

  const media = (repo: string) =>
    target.http
      .get(target.api(`/repos/${repo}/media/data.bin`))
      .set(withToken(bob.token))
      .buffer(true)
      .parse((response, done) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => done(null, Buffer.concat(chunks)));
      });

  it("fetches the objects the source points to with the migration's credentials; without lfs, only the pointers", async () => {
    const name = uniqueName('lfsrc');
    await makeRepo(source, alice, { name, private: true, autoInit: true });
    const repo = `${alice.name}/${name}`;
    const content = randomBytes(50 * 1024);
    const oid = sha256(content);
    const asked = await source.http
      .post(`/${repo}.git/info/lfs/objects/batch`)
      .set({ ...withBasic(alice.name, alice.password), Accept: LFS, 'Content-Type': LFS })
      .send(JSON.stringify({ operation: 'upload', objects: [{ oid, size: content.length }] }));
    const upload = JSON.parse(asked.text).objects[0].actions.upload;
    expect((await source.http.put(new URL(upload.href).pathname).set(upload.header).send(content)).status).toBe(200);
    const pointer = pointerFile({ oid, size: content.length });
    // An object stored on the target by someone else, which the source does not have: naming it in a pointer
    // must not link it to the migrated repository.
    const secret = Buffer.from(`carol's private object ${uniqueName('s')}`);
    const carol = await makeUser(target);
    const carolRepo = `${carol.name}/${(await makeRepo(target, carol, { name: uniqueName('secret'), private: true })).name}`;
    expect(
      (
        await target.http
          .put(`/${carolRepo}.git/info/lfs/objects/${sha256(secret)}/${secret.length}`)
          .set(withBasic(carol.name, carol.password))
          .send(secret)
      ).status,
    ).toBe(200);
    const missing = pointerFile({ oid: sha256(secret), size: secret.length });
    for (const [path, text] of [
      ['data.bin', pointer],
      ['missing.bin', missing],
    ]) {
      const created = await source.http
        .post(source.api(`/repos/${repo}/contents/${path}`))
        .set(withToken(alice.token))
        .send({ content: Buffer.from(text).toString('base64'), message: path });
      expect(created.status).toBe(201);
    }

    const migrate = (repoName: string, lfs: boolean) =>
      target.http
        .post(target.api('/repos/migrate'))
        .set(withToken(bob.token))
        .send({ clone_addr: `${sourceBase}${repo}.git`, repo_name: repoName, auth_username: alice.name, auth_password: alice.password, lfs, private: true });
    const withLfs = await migrate('with-lfs', true);
    expect(withLfs.status).toBe(201);
    const fetched = await media(`${bob.name}/with-lfs`);
    expect(fetched.status).toBe(200);
    expect(Buffer.compare(fetched.body as Buffer, content)).toBe(0);
    expect(withLfs.body.size).toBeGreaterThanOrEqual(50);
    // The object the source lacks is left out, though the target stores it: its pointer is all there is.
    const left = await target.http
      .get(target.api(`/repos/${bob.name}/with-lfs/media/missing.bin`))
      .set(withToken(bob.token))
      .buffer(true);
    expect(left.text).toBe(missing);

    const withoutLfs = await migrate('without-lfs', false);
    expect(withoutLfs.status).toBe(201);
    expect(((await media(`${bob.name}/without-lfs`)).body as Buffer).toString()).toBe(pointer);
  });
});
