import { makeRepo, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The field names of Forgejo's API v1 definitions (templates/swagger/v1_json.tmpl, Forgejo 11/12), which the
 * wire shapes of releases, attachments and packages must have: no field missing, none added.
 */
const FORGEJO_FIELDS: Record<string, string[]> = {
  Release: [
    'archive_download_count',
    'assets',
    'author',
    'body',
    'created_at',
    'draft',
    'hide_archive_links',
    'html_url',
    'id',
    'name',
    'prerelease',
    'published_at',
    'tag_name',
    'tarball_url',
    'target_commitish',
    'upload_url',
    'url',
    'zipball_url',
  ],
  Attachment: ['browser_download_url', 'created_at', 'download_count', 'id', 'name', 'size', 'type', 'uuid'],
  TagArchiveDownloadCount: ['tar_gz', 'zip'],
  Package: ['created_at', 'creator', 'html_url', 'id', 'name', 'owner', 'repository', 'type', 'version'],
  PackageFile: ['Size', 'id', 'md5', 'name', 'sha1', 'sha256', 'sha512'],
  CreateReleaseOption: ['body', 'draft', 'hide_archive_links', 'name', 'prerelease', 'tag_name', 'target_commitish'],
  EditReleaseOption: ['body', 'draft', 'hide_archive_links', 'name', 'prerelease', 'tag_name', 'target_commitish'],
  EditAttachmentOptions: ['browser_download_url', 'name'],
};

/** Forgejo's integer fields (`type: integer, format: int64`), which a generated client types as integers. */
const INTEGER_FIELDS: Record<string, string[]> = {
  Release: ['id'],
  Attachment: ['download_count', 'id', 'size'],
  Package: ['id'],
  PackageFile: ['Size', 'id'],
};

const keys = (value: object) => Object.keys(value).sort();

describe('releases, attachments and packages have Forgejo’s shapes, and every URL they name resolves', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await makeUser(t);
    bob = await makeUser(t);
  });
  afterAll(() => t.close());

  const releases = (owner: string, repo: string) => t.api(`/repos/${owner}/${repo}/releases`);

  /** GET of an absolute URL built from ROOT_URL (http://anvil.test/), following same-host redirects. */
  async function follow(url: string, auth: Record<string, string>): Promise<{ status: number; redirects: string[]; type: string; bytes: number }> {
    const redirects: string[] = [];
    let path = new URL(url).pathname + new URL(url).search;
    for (let hop = 0; hop < 5; hop++) {
      const response = await t.http
        .get(path)
        .set(auth)
        .buffer(true)
        .parse((res, done) => {
          let bytes = 0;
          res.on('data', (chunk: Buffer) => (bytes += chunk.length));
          res.on('end', () => done(null, bytes));
        });
      if (response.status !== 301 && response.status !== 302)
        return { status: response.status, redirects, type: String(response.headers['content-type']), bytes: response.body as number };
      const location = new URL(response.headers.location, `http://anvil.test${path}`);
      redirects.push(location.pathname);
      path = location.pathname + location.search;
    }
    throw new Error(`too many redirects from ${url}`);
  }

  it("names the OpenAPI schemas' fields exactly as Forgejo, with Forgejo's integer types", async () => {
    const document = (await t.http.get('/swagger.v1.json').expect(200)).body as {
      components: { schemas: Record<string, { properties: Record<string, { type?: string }> }> };
    };
    for (const [schema, fields] of Object.entries(FORGEJO_FIELDS)) {
      expect([schema, keys(document.components.schemas[schema].properties)]).toEqual([schema, [...fields].sort()]);
    }
    for (const [schema, fields] of Object.entries(INTEGER_FIELDS)) {
      for (const field of fields) expect([schema, field, document.components.schemas[schema].properties[field].type]).toEqual([schema, field, 'integer']);
    }
    const release = document.components.schemas.Release.properties as Record<string, { $ref?: string; allOf?: { $ref: string }[] }>;
    expect(JSON.stringify(release.archive_download_count)).toContain('#/components/schemas/TagArchiveDownloadCount');
  });

  it('answers releases, attachments, packages and package files with exactly those fields', async () => {
    const repo = await makeRepo(t, alice, { autoInit: true });
    const release = (await t.http.post(releases(alice.name, repo.name)).set(withToken(alice.token)).send({ tag_name: 'v1', name: 'One' }).expect(201)).body;
    const asset = (
      await t.http
        .post(`${releases(alice.name, repo.name)}/${release.id}/assets?name=a.bin`)
        .set(withToken(alice.token))
        .set('Content-Type', 'application/octet-stream')
        .send(Buffer.from('abc'))
        .expect(201)
    ).body;
    const shapes: [string, object][] = [
      ['Release', release],
      ['Attachment', asset],
      ['Release', (await t.http.get(`${releases(alice.name, repo.name)}/${release.id}`).expect(200)).body],
      ['Release', (await t.http.get(`${releases(alice.name, repo.name)}`).expect(200)).body[0]],
      ['Release', (await t.http.get(`${releases(alice.name, repo.name)}/latest`).expect(200)).body],
      ['Release', (await t.http.get(`${releases(alice.name, repo.name)}/tags/v1`).expect(200)).body],
      [
        'Release',
        (
          await t.http
            .patch(`${releases(alice.name, repo.name)}/${release.id}`)
            .set(withToken(alice.token))
            .send({ body: 'notes' })
            .expect(200)
        ).body,
      ],
      ['Attachment', (await t.http.get(`${releases(alice.name, repo.name)}/${release.id}/assets`).expect(200)).body[0]],
      ['Attachment', (await t.http.get(`${releases(alice.name, repo.name)}/${release.id}/assets/${asset.id}`).expect(200)).body],
      [
        'Attachment',
        (
          await t.http
            .patch(`${releases(alice.name, repo.name)}/${release.id}/assets/${asset.id}`)
            .set(withToken(alice.token))
            .send({ name: 'b.bin' })
            .expect(201)
        ).body,
      ],
    ];
    const latest = (await t.http.get(`${releases(alice.name, repo.name)}/${release.id}`).expect(200)).body;
    shapes.push(['Attachment', latest.assets[0]], ['TagArchiveDownloadCount', latest.archive_download_count]);

    const name = uniqueName('pkg');
    await t.http.put(`/api/packages/${alice.name}/generic/${name}/1.0.0/file.txt`).set(withToken(alice.token)).send(Buffer.from('hello')).expect(201);
    shapes.push(
      [
        'Package',
        (
          await t.http
            .get(t.api(`/packages/${alice.name}`))
            .set(withToken(alice.token))
            .expect(200)
        ).body[0],
      ],
      [
        'Package',
        (
          await t.http
            .get(t.api(`/packages/${alice.name}/generic/${name}/1.0.0`))
            .set(withToken(alice.token))
            .expect(200)
        ).body,
      ],
      [
        'PackageFile',
        (
          await t.http
            .get(t.api(`/packages/${alice.name}/generic/${name}/1.0.0/files`))
            .set(withToken(alice.token))
            .expect(200)
        ).body[0],
      ],
    );
    for (const [schema, body] of shapes) expect([schema, keys(body)]).toEqual([schema, [...FORGEJO_FIELDS[schema]].sort()]);
  });

  it('every URL of a release (tag with a slash, private repository) resolves: page, archives, API, upload URL and downloads', async () => {
    const repo = await makeRepo(t, alice, { autoInit: true, private: true });
    const tag = 'release/v2.0';
    const release = (
      await t.http.post(releases(alice.name, repo.name)).set(withToken(alice.token)).send({ tag_name: tag, name: 'Two <b>', body: 'notes & more' }).expect(201)
    ).body;
    const uploaded = [];
    for (const file of ['app linux.tar.gz', 'app.zip']) {
      uploaded.push(
        (
          await t.http
            .post(`${releases(alice.name, repo.name)}/${release.id}/assets?name=${encodeURIComponent(file)}`)
            .set(withToken(alice.token))
            .set('Content-Type', 'application/octet-stream')
            .send(Buffer.from(`content of ${file}`))
            .expect(201)
        ).body,
      );
    }
    const full = (
      await t.http
        .get(`${releases(alice.name, repo.name)}/${release.id}`)
        .set(withToken(alice.token))
        .expect(200)
    ).body;
    expect(full.html_url).toBe(`http://anvil.test/${alice.name}/${repo.name}/releases/tag/release/v2.0`);
    expect(full.tarball_url).toBe(`http://anvil.test/${alice.name}/${repo.name}/archive/release/v2.0.tar.gz`);
    expect(full.assets.map((a: { browser_download_url: string }) => a.browser_download_url)).toEqual([
      `http://anvil.test/${alice.name}/${repo.name}/releases/download/release%2Fv2.0/app%20linux.tar.gz`,
      `http://anvil.test/${alice.name}/${repo.name}/releases/download/release%2Fv2.0/app.zip`,
    ]);
    const urls: string[] = [
      full.url,
      full.html_url,
      full.tarball_url,
      full.zipball_url,
      full.upload_url,
      ...full.assets.map((a: { browser_download_url: string }) => a.browser_download_url),
    ];
    urls.push(...uploaded.map((a: { browser_download_url: string }) => a.browser_download_url));
    for (const url of urls) {
      const reached = await follow(url, withToken(alice.token));
      expect([url, reached.status]).toEqual([url, 200]);
      expect(reached.bytes).toBeGreaterThan(0);
      // The repository is private: nobody else reaches anything through the same URLs.
      expect([url, (await follow(url, withToken(bob.token))).status]).toEqual([url, 404]);
    }
    // The alias never points anywhere but the archive route (a `..` would climb to another API route).
    await t.http.get(`/${alice.name}/${repo.name}/archive/..%2F..%2F..%2Fuser`).set(withToken(alice.token)).expect(404);
    const archive = await follow(full.tarball_url, withToken(alice.token));
    expect(archive.redirects).toEqual([`/api/v1/repos/${alice.name}/${repo.name}/archive/release/v2.0.tar.gz`]);
    expect(archive.type).toMatch(/gzip/);
    const page = await t.http.get(new URL(full.html_url).pathname).set(withToken(alice.token)).expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('Two &lt;b&gt;');
    expect(page.text).toContain('notes &amp; more');
    expect(page.text).toContain(`href="${full.assets[0].browser_download_url}"`);
    // hide_archive_links hides them from the page only: the API still names them (as Forgejo), and they resolve.
    const hidden = (
      await t.http
        .patch(`${releases(alice.name, repo.name)}/${release.id}`)
        .set(withToken(alice.token))
        .send({ hide_archive_links: true })
        .expect(200)
    ).body;
    expect(hidden.tarball_url).toBe(full.tarball_url);
    expect((await follow(hidden.zipball_url, withToken(alice.token))).status).toBe(200);
    const hiddenPage = await t.http.get(new URL(full.html_url).pathname).set(withToken(alice.token)).expect(200);
    expect(hiddenPage.text).not.toContain(full.tarball_url);
    expect(page.text).toContain(`href="${full.tarball_url}"`);

    // A draft's page is shown to writers only; readers of a public repository get 404.
    const open = await makeRepo(t, alice, { autoInit: true });
    const draft = (await t.http.post(releases(alice.name, open.name)).set(withToken(alice.token)).send({ tag_name: 'v3', draft: true }).expect(201)).body;
    await t.http.get(new URL(draft.html_url).pathname).set(withToken(alice.token)).expect(200);
    await t.http.get(new URL(draft.html_url).pathname).set(withToken(bob.token)).expect(404);
    await t.http.get(new URL(draft.html_url).pathname).expect(404);
  });

  it("two attachments with one name are listed by uuid URL (Forgejo's rule), and both download", async () => {
    const repo = await makeRepo(t, alice, { autoInit: true });
    const release = (await t.http.post(releases(alice.name, repo.name)).set(withToken(alice.token)).send({ tag_name: 'v1' }).expect(201)).body;
    for (const content of ['first', 'second']) {
      await t.http
        .post(`${releases(alice.name, repo.name)}/${release.id}/assets?name=same.txt`)
        .set(withToken(alice.token))
        .set('Content-Type', 'application/octet-stream')
        .send(Buffer.from(content))
        .expect(201);
    }
    const listed = (await t.http.get(`${releases(alice.name, repo.name)}/${release.id}/assets`).expect(200)).body as {
      uuid: string;
      browser_download_url: string;
    }[];
    expect(listed.map((a) => a.browser_download_url)).toEqual(listed.map((a) => `http://anvil.test/attachments/${a.uuid}`));
    const bodies = [];
    for (const asset of listed) bodies.push((await t.http.get(new URL(asset.browser_download_url).pathname).buffer(true).expect(200)).body.toString());
    expect(bodies).toEqual(['first', 'second']);
  });

  it("a package's html_url is a page of the version with download links that resolve; a private owner's pages are hidden", async () => {
    const name = uniqueName('pkg');
    await t.http.put(`/api/packages/${alice.name}/generic/${name}/1.0.0/tool.bin`).set(withToken(alice.token)).send(Buffer.from('tool')).expect(201);
    const pkg = (
      await t.http
        .get(t.api(`/packages/${alice.name}/generic/${name}/1.0.0`))
        .set(withToken(alice.token))
        .expect(200)
    ).body;
    expect(pkg.html_url).toBe(`http://anvil.test/${alice.name}/-/packages/generic/${name}/1.0.0`);
    const page = await t.http.get(new URL(pkg.html_url).pathname).expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const links = [...page.text.matchAll(/href="([^"]+)"/g)].map((match) => match[1].replace(/&amp;/g, '&'));
    expect(links).toContain(`http://anvil.test/api/packages/${alice.name}/generic/${name}/1.0.0/tool.bin`);
    for (const link of links) expect([link, (await follow(link, {})).status]).toEqual([link, 200]);

    const hidden = await makeUser(t, { visibility: 'private' });
    const other = uniqueName('pkg');
    await t.http.put(`/api/packages/${hidden.name}/generic/${other}/1.0.0/x.bin`).set(withToken(hidden.token)).send(Buffer.from('x')).expect(201);
    // As the package API: anonymous callers are asked to sign in, others are told nothing exists.
    await t.http.get(`/${hidden.name}/-/packages/generic/${other}/1.0.0`).expect(401);
    await t.http.get(`/${hidden.name}/-/packages/generic/${other}/1.0.0`).set(withToken(bob.token)).expect(404);
    await t.http.get(`/${hidden.name}/-/packages/generic/${other}/1.0.0`).set(withToken(hidden.token)).expect(200);
  });

  it('lists releases matching q in the tag name, title or notes, any case; an empty edit text leaves the release as it was', async () => {
    const repo = await makeRepo(t, alice, { autoInit: true });
    const make = (tag: string, name: string, body: string) =>
      t.http.post(releases(alice.name, repo.name)).set(withToken(alice.token)).send({ tag_name: tag, name, body }).expect(201);
    const first = (await make('v1.0', 'Alpha', 'first cut')).body;
    await make('v2.0', 'Beta', 'has the 100% fix');
    await make('nightly', 'Gamma', 'ALPHA again');
    const search = async (q: string) =>
      ((await t.http.get(releases(alice.name, repo.name)).query({ q }).expect(200)).body as { tag_name: string }[]).map((r) => r.tag_name).sort();
    expect(await search('alpha')).toEqual(['nightly', 'v1.0']);
    expect(await search('V2')).toEqual(['v2.0']);
    expect(await search('100%')).toEqual(['v2.0']);
    expect(await search('%')).toEqual(['v2.0']);
    expect(await search('zzz')).toEqual([]);
    expect(await search('')).toEqual(['nightly', 'v1.0', 'v2.0']);
    const edited = await t.http
      .patch(`${releases(alice.name, repo.name)}/${first.id}`)
      .set(withToken(alice.token))
      .send({ name: '', body: '', prerelease: true })
      .expect(200);
    expect(edited.body).toMatchObject({ name: 'Alpha', body: 'first cut', prerelease: true });
  });
});
