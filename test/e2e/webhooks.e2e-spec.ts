import { createHmac } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { recordSecrets } from '../support/e2e-log';
import { processRunning } from '../support/processes';
import { makeOrg, makeRepo, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { GitClient, withCredentials } from '../support/git-client';
import { GitUpstream } from '../support/git-upstream';
import { createMysqlDatabase, startTestApp, TestApp, usesMysql } from '../support/test-app';
import { WebhookDispatcher } from '../../src/webhooks/webhook-dispatcher';
import { closedPort, SinkRequest, WebhookSink } from '../support/webhook-sink';

const SECRET = 'hook-secret-value-7f3a';
const AUTHORIZATION = 'Bearer hook-authorization-91c2';
// The run's log scan (test/support/e2e-log.ts) fails the run when either appears in any log line.
recordSecrets(SECRET, AUTHORIZATION);

/** Webhooks: the hooks API, events from pushes and the API, headers, signatures, retries, history. */
describe('webhooks', () => {
  let t: TestApp;
  let base: string;
  let client: GitClient;
  let sink: WebhookSink;
  let alice: TestUser;
  let bob: TestUser;
  let admin: TestUser;

  const api = (method: 'get' | 'post' | 'patch' | 'delete', apiPath: string, user: TestUser | null = alice) => {
    const request = t.http[method](t.api(apiPath));
    return user ? request.set(withToken(user.token)) : request;
  };

  async function hook(full: string, config: Record<string, string>, extra: Record<string, unknown> = {}): Promise<Record<string, any>> {
    const response = await api('post', `/repos/${full}/hooks`).send({
      type: 'forgejo',
      active: true,
      events: ['push', 'create', 'delete', 'repository', 'release', 'status'],
      config: { content_type: 'json', ...config },
      ...extra,
    });
    expect(response.status).toBe(201);
    return response.body;
  }

  async function repoWithPush(): Promise<{ full: string; work: string }> {
    const name = uniqueName('repo');
    await makeRepo(t, alice, { name });
    const work = await client.workingCopy('main', { 'README.md': 'hello\n' });
    return { full: `${alice.name}/${name}`, work };
  }

  const push = (full: string, work: string, ...refs: string[]) =>
    client.ok(['push', '--quiet', withCredentials(base, `${full}.git`, alice.name, alice.token), ...refs], { cwd: work });
  /** Every request the sink received at `pathName`, retries of a delivery included. */
  const sent = (pathName: string) => (requests: SinkRequest[]) => requests.filter((request) => request.path === pathName);
  /**
   * The deliveries received at `pathName`, each once, in the order first seen. Deliveries are at least once: one
   * whose answer came too late for the sender (a loaded machine) is sent again with the same delivery id, as a
   * receiver must expect.
   */
  const forPath = (pathName: string) => (requests: SinkRequest[]) => {
    const all = sent(pathName)(requests);
    return all.filter((request, index) => all.findIndex((other) => other.headers['x-github-delivery'] === request.headers['x-github-delivery']) === index);
  };
  const signature = (algorithm: string, body: Buffer, secret = SECRET) => createHmac(algorithm, secret).update(body).digest('hex');

  beforeAll(async () => {
    t = await startTestApp({ WEBHOOK_ALLOWED_HOSTS: 'loopback', ALLOW_LOCAL_NETWORKS: 'true' }, (config) => {
      config.webhooks.retryBaseMs = 50;
      config.webhooks.pollMs = 100;
      // Every outcome renews its hook's lease here; the other processes of this file keep the default (2 s).
      config.webhooks.leaseRenewMs = 0;
    });
    base = await t.listen();
    client = new GitClient();
    sink = await new WebhookSink().start();
    alice = await makeUser(t);
    bob = await makeUser(t);
    admin = await makeUser(t, { admin: true });
  });

  afterAll(async () => {
    await sink?.stop();
    client?.dispose();
    await t?.close();
  });

  it('creates, reads, edits and deletes repository hooks in Forgejo shape, never returning secrets', async () => {
    const { full } = await repoWithPush();
    const created = await hook(full, { url: `${sink.url}/crud`, secret: SECRET }, { authorization_header: AUTHORIZATION, branch_filter: 'main' });
    expect(created).toMatchObject({
      type: 'forgejo',
      active: true,
      branch_filter: 'main',
      content_type: 'json',
      authorization_header: '',
      config: { url: `${sink.url}/crud`, content_type: 'json', http_method: 'POST' },
    });
    expect(created.events.sort()).toEqual(['create', 'delete', 'push', 'release', 'repository', 'status']);
    expect(JSON.stringify(created)).not.toContain(SECRET);
    const listed = await api('get', `/repos/${full}/hooks`);
    expect(listed.status).toBe(200);
    expect(listed.headers['x-total-count']).toBe('1');
    expect(JSON.stringify(listed.body)).not.toContain(SECRET);
    expect(JSON.stringify(listed.body)).not.toContain('hook-authorization');
    const edited = await api('patch', `/repos/${full}/hooks/${created.id}`).send({ active: false, events: ['push'], config: { content_type: 'form' } });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ active: false, events: ['push'], content_type: 'form' });
    expect((await api('get', `/repos/${full}/hooks/${created.id}`)).body.content_type).toBe('form');
    // Secrets are sealed at rest.
    const rows = await t.dataSource.query('SELECT secret, authorization_header FROM webhook WHERE id = ?', [created.id]);
    expect(rows[0].secret).toMatch(/^v1:/);
    expect(rows[0].secret).not.toContain(SECRET);
    expect(rows[0].authorization_header).not.toContain('hook-authorization');
    expect((await api('delete', `/repos/${full}/hooks/${created.id}`)).status).toBe(204);
    expect((await api('get', `/repos/${full}/hooks/${created.id}`)).status).toBe(404);
  });

  it('refuses other hook types, bad content types, bad URLs and bad branch filters with 422', async () => {
    const { full } = await repoWithPush();
    const post = (body: object) => api('post', `/repos/${full}/hooks`).send(body);
    expect((await post({ type: 'slack', config: { url: sink.url, content_type: 'json' } })).status).toBe(422);
    expect((await post({ type: 'gitea', config: { url: sink.url, content_type: 'xml' } })).status).toBe(422);
    expect((await post({ type: 'gitea', config: { content_type: 'json' } })).status).toBe(422);
    expect((await post({ type: 'gitea', config: { url: 'ftp://x', content_type: 'json' } })).status).toBe(422);
    expect((await post({ type: 'gitea', config: { url: sink.url, content_type: 'json' }, branch_filter: '{main' })).status).toBe(422);
  });

  it('lets only administrators manage hooks: 401 anonymous, 403 others, 404 for unseen repositories, on every scope', async () => {
    const { full } = await repoWithPush();
    const privateName = uniqueName('private');
    await makeRepo(t, alice, { name: privateName, private: true });
    const created = await hook(full, { url: `${sink.url}/perm` });
    expect((await api('get', `/repos/${full}/hooks`, null)).status).toBe(401);
    expect((await api('get', `/repos/${full}/hooks`, bob)).status).toBe(403);
    expect((await api('get', `/repos/${full}/hooks/${created.id}`, bob)).status).toBe(403);
    expect((await api('patch', `/repos/${full}/hooks/${created.id}`, bob).send({ active: false })).status).toBe(403);
    expect((await api('delete', `/repos/${full}/hooks/${created.id}`, bob)).status).toBe(403);
    expect((await api('post', `/repos/${full}/hooks/${created.id}/tests`, bob)).status).toBe(403);
    expect((await api('get', `/repos/${full}/hooks/${created.id}/deliveries`, bob)).status).toBe(403);
    expect((await api('get', `/repos/${alice.name}/${privateName}/hooks`, bob)).status).toBe(404);
    expect((await api('get', `/repos/${full}/hooks`, admin)).status).toBe(200);
    // Organisation hooks: owners and site admins.
    const org = await makeOrg(t, alice.user);
    const orgHook = await api('post', `/orgs/${org.name}/hooks`).send({
      type: 'gitea',
      active: true,
      config: { url: `${sink.url}/org`, content_type: 'json' },
    });
    expect(orgHook.status).toBe(201);
    expect((await api('get', `/orgs/${org.name}/hooks`, bob)).status).toBe(403);
    expect((await api('get', `/orgs/${org.name}/hooks/${orgHook.body.id}`, admin)).status).toBe(200);
    expect((await api('get', `/orgs/nobody-${uniqueName()}/hooks`)).status).toBe(404);
    // The caller's own hooks: another user's hook is not found.
    const userHook = await api('post', '/user/hooks').send({ type: 'gogs', active: true, config: { url: `${sink.url}/user`, content_type: 'json' } });
    expect(userHook.status).toBe(201);
    expect((await api('get', `/user/hooks/${userHook.body.id}`, bob)).status).toBe(404);
    expect((await api('get', '/user/hooks', null)).status).toBe(401);
    // System hooks: site admins only.
    expect((await api('get', '/admin/hooks', alice)).status).toBe(403);
    const systemHook = await api('post', '/admin/hooks', admin).send({
      type: 'forgejo',
      active: false,
      config: { url: `${sink.url}/system`, content_type: 'json', is_system_webhook: 'true' },
    });
    expect(systemHook.status).toBe(201);
    expect((await api('get', `/admin/hooks/${systemHook.body.id}/deliveries`, admin)).status).toBe(200);
    expect((await api('delete', `/admin/hooks/${systemHook.body.id}`, admin)).status).toBe(204);
  });

  it('sends create and push for a pushed branch with every header family, valid signatures and the Authorization header', async () => {
    const { full, work } = await repoWithPush();
    const created = await hook(full, { url: `${sink.url}/push`, secret: SECRET }, { authorization_header: AUTHORIZATION });
    await push(full, work, 'main');
    await sink.waitFor((requests) => forPath('/push')(requests).length >= 2, 'create and push');
    const [first, second] = forPath('/push')(sink.requests);
    expect(first.headers['x-forgejo-event']).toBe('create');
    expect(second.headers['x-forgejo-event']).toBe('push');
    for (const request of [first, second]) {
      const event = request.headers['x-forgejo-event'];
      for (const family of ['forgejo', 'gitea', 'gogs']) {
        expect(request.headers[`x-${family}-delivery`]).toBe(request.headers['x-github-delivery']);
        expect(request.headers[`x-${family}-event`]).toBe(event);
        expect(request.headers[`x-${family}-event-type`]).toBe(event);
        expect(request.headers[`x-${family}-signature`]).toBe(signature('sha256', request.body));
      }
      expect(request.headers['x-github-event']).toBe(event);
      expect(request.headers['x-github-event-type']).toBe(event);
      expect(request.headers['x-hub-signature']).toBe(`sha1=${signature('sha1', request.body)}`);
      expect(request.headers['x-hub-signature-256']).toBe(`sha256=${signature('sha256', request.body)}`);
      expect(request.headers.authorization).toBe(AUTHORIZATION);
      expect(request.headers['content-type']).toBe('application/json');
    }
    expect(first.json).toMatchObject({ ref: 'refs/heads/main', ref_type: 'branch', repository: { full_name: full }, sender: { login: alice.name } });
    expect(second.json).toMatchObject({
      ref: 'refs/heads/main',
      before: '0'.repeat(40),
      total_commits: 1,
      repository: { full_name: full },
      pusher: { login: alice.name },
    });
    expect(second.json.commits[0]).toMatchObject({
      message: 'add README.md\n',
      added: ['README.md'],
      author: { name: 'Test Author', email: 'author@example.com' },
    });
    expect(second.json.head_commit.id).toBe(second.json.after);
    // The history shows both, newest first, without signatures or the Authorization header.
    // The sink has the requests before the server has their answers: the history is read once both are recorded.
    let history = await api('get', `/repos/${full}/hooks/${created.id}/deliveries`);
    for (let attempt = 0; attempt < 200 && history.body.some((delivery: any) => delivery.status === 'pending'); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      history = await api('get', `/repos/${full}/hooks/${created.id}/deliveries`);
    }
    expect(history.status).toBe(200);
    expect(history.body.map((delivery: any) => delivery.event)).toEqual(['push', 'create']);
    // One attempt per request the sink saw for the push's delivery id (one, unless it was sent again).
    const pushAttempts = sent('/push')(sink.requests).filter((request) => request.headers['x-github-delivery'] === second.headers['x-github-delivery']);
    expect(history.body[0]).toMatchObject({ status: 'delivered', attempts: pushAttempts.length, response_status: 200, response_body: 'sink answer 200' });
    const shown = JSON.stringify(history.body);
    expect(shown).not.toContain(SECRET);
    expect(shown).not.toContain('hook-authorization');
    expect(shown).not.toContain(signature('sha256', second.body));
    expect(history.body[0].request_headers['X-Forgejo-Event']).toBe('push');
  });

  it('sends delete for a deleted branch, and the commits of an update with compare_url', async () => {
    const { full, work } = await repoWithPush();
    await push(full, work, 'main', 'main:feature');
    await hook(full, { url: `${sink.url}/delete` });
    fs.writeFileSync(path.join(work, 'two.txt'), '2\n');
    await client.ok(['add', 'two.txt'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', 'two'], { cwd: work });
    await push(full, work, 'main', ':feature');
    await sink.waitFor((requests) => forPath('/delete')(requests).length >= 2, 'push and delete');
    const events = forPath('/delete')(sink.requests).map((request) => request.headers['x-forgejo-event']);
    expect(events.sort()).toEqual(['delete', 'push']);
    const pushed = forPath('/delete')(sink.requests).find((request) => request.headers['x-forgejo-event'] === 'push')!;
    expect(pushed.json.compare_url).toContain(`/${full}/compare/`);
    expect(pushed.json.commits.map((commit: any) => commit.message)).toEqual(['two\n']);
    const deleted = forPath('/delete')(sink.requests).find((request) => request.headers['x-forgejo-event'] === 'delete')!;
    expect(deleted.json).toMatchObject({ ref: 'feature', ref_type: 'branch', pusher_type: 'user' });
  });

  it('applies branch_filter to branch events, sends form bodies signed over their exact bytes, and shortens refs for gitea', async () => {
    const { full, work } = await repoWithPush();
    await api('post', `/repos/${full}/hooks`)
      .send({
        type: 'gitea',
        active: true,
        events: ['push', 'create'],
        branch_filter: 'release/*',
        config: { url: `${sink.url}/filtered`, content_type: 'form', secret: SECRET },
      })
      .expect(201);
    await push(full, work, 'main');
    await push(full, work, 'main:release/1.0');
    await sink.waitFor((requests) => forPath('/filtered')(requests).length >= 2, 'release branch events');
    const received = forPath('/filtered')(sink.requests);
    expect(received.every((request) => request.json.ref !== 'refs/heads/main')).toBe(true);
    const create = received.find((request) => request.headers['x-gitea-event'] === 'create')!;
    expect(create.json.ref).toBe('release/1.0');
    const form = received.find((request) => request.headers['x-gitea-event'] === 'push')!;
    expect(form.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(form.body.toString('utf8').startsWith('payload=')).toBe(true);
    expect(form.headers['x-gitea-signature']).toBe(signature('sha256', form.body));
    expect(form.json.ref).toBe('refs/heads/release/1.0');
  });

  it('honours http_method GET for forgejo and gitea hooks as Forgejo sends it: the payload in the query, signed as JSON', async () => {
    const { full, work } = await repoWithPush();
    const created = await hook(full, { url: `${sink.url}/get?kept=1`, secret: SECRET, http_method: 'get' });
    expect(created.config.http_method).toBe('GET');
    await push(full, work, 'main');
    const received = (requests: SinkRequest[]) => requests.filter((request) => request.path.startsWith('/get?'));
    await sink.waitFor((requests) => received(requests).length >= 2, 'GET deliveries');
    for (const request of received(sink.requests)) {
      expect(request.method).toBe('GET');
      expect(request.body.length).toBe(0);
      expect(request.headers['content-type']).toBeUndefined();
      const query = new URL(request.path, sink.url).searchParams;
      expect(query.get('kept')).toBe('1');
      const payload = Buffer.from(query.get('payload') ?? '', 'utf8');
      expect(JSON.parse(payload.toString('utf8'))).toMatchObject({ repository: { full_name: full } });
      expect(request.headers['x-forgejo-signature']).toBe(signature('sha256', payload));
      expect(request.headers['x-hub-signature']).toBe(`sha1=${signature('sha1', payload)}`);
    }
    // The gogs format is POST only, and PUT is for Matrix hooks alone (422 as Forgejo's validation).
    const gogs = await api('post', `/repos/${full}/hooks`).send({
      type: 'gogs',
      active: true,
      config: { url: `${sink.url}/x`, content_type: 'json', http_method: 'GET' },
    });
    expect(gogs.status).toBe(422);
    const put = await api('post', `/repos/${full}/hooks`).send({
      type: 'forgejo',
      active: true,
      config: { url: `${sink.url}/x`, content_type: 'json', http_method: 'PUT' },
    });
    expect(put.status).toBe(422);
    const back = await api('patch', `/repos/${full}/hooks/${created.id}`).send({ config: { http_method: 'POST' } });
    expect(back.body.config.http_method).toBe('POST');
  });

  it('names commit authors and committers by the account their address belongs to (username), as Forgejo', async () => {
    const { full, work } = await repoWithPush();
    await hook(full, { url: `${sink.url}/authors` });
    fs.writeFileSync(path.join(work, 'mine.txt'), 'mine\n');
    await client.ok(['add', 'mine.txt'], { cwd: work });
    // Authored by alice (her address in another case), committed by an address no account has.
    await client.ok(['commit', '--quiet', '-m', 'mine'], {
      cwd: work,
      env: { GIT_AUTHOR_EMAIL: `${alice.name.toUpperCase()}@EXAMPLE.COM`, GIT_COMMITTER_EMAIL: 'nobody-at-all@example.net' },
    });
    await push(full, work, 'main');
    await sink.waitFor((requests) => forPath('/authors')(requests).some((request) => request.headers['x-forgejo-event'] === 'push'), 'push');
    const pushed = forPath('/authors')(sink.requests).find((request) => request.headers['x-forgejo-event'] === 'push')!;
    const [mine, first] = pushed.json.commits;
    expect(mine.author).toMatchObject({ email: `${alice.name.toUpperCase()}@EXAMPLE.COM`, username: alice.name });
    expect(mine.committer).toMatchObject({ email: 'nobody-at-all@example.net', username: '' });
    expect(first.author).toMatchObject({ email: 'author@example.com', username: '' });
    expect(pushed.json.head_commit.author.username).toBe(alice.name);
  });

  it('retries after 500 with the same UUID, honours the attempts in the history, and keeps order per hook', async () => {
    const { full } = await repoWithPush();
    const created = await hook(full, { url: `${sink.url}/retry` });
    let failures = 0;
    sink.answer = (request) =>
      request.path === '/retry' && request.headers['x-forgejo-event'] === 'push' && failures++ < 2 ? { status: 500 } : { status: 200 };
    // Three content writes: three pushes in this order.
    for (const name of ['a.txt', 'b.txt', 'c.txt']) {
      const response = await api('post', `/repos/${full}/contents/${name}`).send({ content: Buffer.from(name).toString('base64'), message: `add ${name}` });
      expect(response.status).toBe(201);
    }
    await sink.waitFor((requests) => sent('/retry')(requests).filter((request) => request.headers['x-forgejo-event'] === 'push').length >= 5, 'retried pushes');
    sink.answer = () => ({ status: 200 });
    const pushes = sent('/retry')(sink.requests).filter((request) => request.headers['x-forgejo-event'] === 'push');
    // The first push was tried three times (same UUID), then the others followed in order.
    expect(pushes[0].headers['x-forgejo-delivery']).toBe(pushes[1].headers['x-forgejo-delivery']);
    expect(pushes[1].headers['x-forgejo-delivery']).toBe(pushes[2].headers['x-forgejo-delivery']);
    const messages = [...new Map(pushes.map((request) => [request.headers['x-forgejo-delivery'], request.json.head_commit.message])).values()];
    expect(messages).toEqual(['add a.txt\n', 'add b.txt\n', 'add c.txt\n']);
    const history = await api('get', `/repos/${full}/hooks/${created.id}/deliveries`);
    const uuid = pushes[0].headers['x-forgejo-delivery'];
    const first = history.body.find((delivery: any) => delivery.uuid === uuid);
    // Two 500s, then 200: three attempts, or more on a loaded machine where an answer came after the sender's
    // deadline (that attempt failed too and was tried again). The history counts every attempt the receiver saw.
    expect(first.status).toBe('delivered');
    expect(first.attempts).toBeGreaterThanOrEqual(3);
    expect(first.attempts).toBe(sent('/retry')(sink.requests).filter((request) => request.headers['x-forgejo-delivery'] === uuid).length);
  });

  it('waits at least what Retry-After asks, and keeps the first 64 KiB of a long answer', async () => {
    const { full } = await repoWithPush();
    const created = await hook(full, { url: `${sink.url}/retry-after` });
    // 100 KiB, beginning with two-byte characters: more than a TEXT column holds on MariaDB.
    const long = 'é'.repeat(10) + 'x'.repeat(100 * 1024);
    // 429 with Retry-After until the history shows a 429 recorded; then 200 with the long answer.
    let recorded: { deliveredMs: number; nextAttemptMs: number } | undefined;
    sink.answer = (request) =>
      request.path !== '/retry-after' ? { status: 200 } : recorded ? { status: 200, body: long } : { status: 429, headers: { 'Retry-After': '2' } };
    const response = await api('post', `/repos/${full}/contents/retry-after.txt`).send({ content: Buffer.from('x').toString('base64'), message: 'add' });
    expect(response.status).toBe(201);
    const rows = () =>
      t.dataSource.query('SELECT status, response_status, delivered_ms, next_attempt_ms FROM webhook_delivery WHERE hook_id = ? ORDER BY id', [
        created.id,
      ]) as Promise<Record<string, unknown>[]>;
    let states: Record<string, unknown>[] = [];
    for (;;) {
      states = await rows();
      if (!recorded) {
        const throttled = states.find((row) => Number(row.response_status) === 429 && row.status === 'pending');
        if (throttled) recorded = { deliveredMs: Number(throttled.delivered_ms), nextAttemptMs: Number(throttled.next_attempt_ms) };
      }
      if (states.length > 0 && states.every((row) => row.status !== 'pending')) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(recorded).toBeDefined();
    // The retry was scheduled at least what Retry-After asked after the 429, and not sent before.
    expect(recorded!.nextAttemptMs - recorded!.deliveredMs).toBeGreaterThanOrEqual(2000);
    const answered = sent('/retry-after')(sink.requests).filter((request) => request.receivedAt! > recorded!.deliveredMs);
    expect(answered.length).toBeGreaterThan(0);
    expect(Math.min(...answered.map((request) => request.receivedAt!))).toBeGreaterThanOrEqual(recorded!.nextAttemptMs);
    sink.answer = () => ({ status: 200 });
    const history = await api('get', `/repos/${full}/hooks/${created.id}/deliveries`);
    expect(history.body.map((delivery: any) => delivery.status)).toEqual(history.body.map(() => 'delivered'));
    // The first 64 KiB less one byte: 10 characters of two bytes, then 65 515 of one.
    expect(history.body.map((delivery: any) => delivery.response_body)).toEqual(history.body.map(() => long.slice(0, 10 + 65_515)));
  });

  it('retries after a refused connection and shows it in the history; redeliver sends the event again', async () => {
    const { full } = await repoWithPush();
    const port = await closedPort();
    const created = await hook(full, { url: `http://127.0.0.1:${port}/refused` });
    const write = await api('post', `/repos/${full}/contents/x.txt`).send({ content: Buffer.from('x').toString('base64') });
    expect(write.status).toBe(201);
    let history: any[] = [];
    for (let round = 0; round < 300 && !(history[0]?.attempts >= 2); round++) {
      history = (await api('get', `/repos/${full}/hooks/${created.id}/deliveries`)).body;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const pushDelivery = history.find((delivery) => delivery.event === 'push');
    expect(pushDelivery.attempts).toBeGreaterThanOrEqual(2);
    expect(pushDelivery.response_status).toBe(0);
    expect(pushDelivery.response_body).toMatch(/ECONNREFUSED/);
    const one = await api('get', `/repos/${full}/hooks/${created.id}/deliveries/${pushDelivery.uuid}`);
    expect(one.status).toBe(200);
    expect(one.body.uuid).toBe(pushDelivery.uuid);
    // Point the hook at the sink; a redelivery of the first event arrives with a new UUID.
    await api('patch', `/repos/${full}/hooks/${created.id}`)
      .send({ config: { url: `${sink.url}/redelivered` } })
      .expect(200);
    const again = await api('post', `/repos/${full}/hooks/${created.id}/deliveries/${pushDelivery.uuid}/redeliver`);
    expect(again.status).toBe(201);
    expect(again.body.uuid).not.toBe(pushDelivery.uuid);
    await sink.waitFor(
      (requests) => requests.some((request) => request.path === '/redelivered' && request.headers['x-forgejo-delivery'] === again.body.uuid),
      'redelivery',
    );
  });

  it('sends the test push and the repository, release and status events', async () => {
    const { full, work } = await repoWithPush();
    await push(full, work, 'main');
    const created = await hook(full, { url: `${sink.url}/events` });
    expect((await api('post', `/repos/${full}/hooks/${created.id}/tests`)).status).toBe(204);
    await sink.waitFor((requests) => forPath('/events')(requests).length >= 1, 'test push');
    expect(forPath('/events')(sink.requests)[0].json).toMatchObject({ ref: 'refs/heads/main', total_commits: 1 });
    const release = await api('post', `/repos/${full}/releases`).send({ tag_name: 'v1', name: 'one' });
    expect(release.status).toBe(201);
    const sha = forPath('/events')(sink.requests)[0].json.after;
    const status = await api('post', `/repos/${full}/statuses/${sha}`).send({ state: 'success', context: 'ci/build', target_url: 'https://ci.example/1' });
    expect(status.status).toBe(201);
    await sink.waitFor((requests) => forPath('/events')(requests).some((request) => request.headers['x-forgejo-event'] === 'status'), 'status event');
    const statusEvent = forPath('/events')(sink.requests).find((request) => request.headers['x-forgejo-event'] === 'status')!;
    expect(statusEvent.json).toMatchObject({ sha, state: 'success', context: 'ci/build', target_url: 'https://ci.example/1', repository: { full_name: full } });
    // Organisation hooks hear of repositories created and deleted in the organisation.
    const org = await makeOrg(t, alice.user);
    await api('post', `/orgs/${org.name}/hooks`)
      .send({ type: 'forgejo', active: true, events: ['repository'], config: { url: `${sink.url}/org-events`, content_type: 'json' } })
      .expect(201);
    const repoName = uniqueName('orgrepo');
    await makeRepo(t, alice, { name: repoName, org: org.name });
    expect((await api('delete', `/repos/${org.name}/${repoName}`)).status).toBe(204);
    await sink.waitFor((requests) => forPath('/org-events')(requests).length >= 2, 'repository events');
    expect(forPath('/org-events')(sink.requests).map((request) => request.json.action)).toEqual(['created', 'deleted']);
    expect(forPath('/org-events')(sink.requests)[0].json).toMatchObject({ repository: { name: repoName }, organization: { login: org.name } });
  });

  it('sends issues and issue_comment events with Forgejo’s payloads, and audits deletions', async () => {
    const repo = await makeRepo(t, alice);
    const full = repo.full_name;
    await api('post', `/repos/${full}/hooks`)
      .send({ type: 'gitea', active: true, events: ['issues', 'issue_comment'], config: { url: `${sink.url}/issues`, content_type: 'json' } })
      .expect(201);
    const issue = (await api('post', `/repos/${full}/issues`).send({ title: 'hooked', body: 'first' }).expect(201)).body;
    await api('patch', `/repos/${full}/issues/${issue.number}`).send({ title: 'hooked, renamed' }).expect(201);
    await api('patch', `/repos/${full}/issues/${issue.number}`).send({ state: 'closed' }).expect(201);
    const comment = (await api('post', `/repos/${full}/issues/${issue.number}/comments`).send({ body: 'said' }).expect(201)).body;
    await api('patch', `/repos/${full}/issues/comments/${comment.id}`).send({ body: 'said again' }).expect(200);
    await api('delete', `/repos/${full}/issues/comments/${comment.id}`).expect(204);
    await api('delete', `/repos/${full}/issues/${issue.number}`).expect(204);
    // One request per delivery (a retry under load repeats a delivery's id).
    const received = () => [...new Map(forPath('/issues')(sink.requests).map((request) => [request.headers['x-gitea-delivery'], request])).values()];
    await sink.waitFor(() => received().length >= 7, 'issue events', 150_000);
    const byAction = (event: string, action: string) =>
      received().find((request) => request.headers['x-gitea-event'] === event && request.json.action === action)!.json;
    expect(
      received()
        .map((request) => `${request.headers['x-gitea-event']}:${request.json.action}`)
        .sort(),
    ).toEqual(
      ['issues:opened', 'issues:edited', 'issues:closed', 'issue_comment:created', 'issue_comment:edited', 'issue_comment:deleted', 'issues:deleted'].sort(),
    );
    expect(byAction('issues', 'opened')).toMatchObject({
      number: issue.number,
      issue: { id: issue.id, title: 'hooked', state: 'open' },
      repository: { full_name: full },
      sender: { login: alice.name },
      commit_id: '',
    });
    expect(byAction('issues', 'edited')).toMatchObject({ changes: { title: { from: 'hooked' } }, issue: { title: 'hooked, renamed' } });
    expect(byAction('issues', 'closed').issue.state).toBe('closed');
    expect(byAction('issue_comment', 'created')).toMatchObject({
      issue: { number: issue.number, comments: 1 },
      comment: { id: comment.id, body: 'said' },
      is_pull: false,
    });
    expect(byAction('issue_comment', 'edited')).toMatchObject({ changes: { body: { from: 'said' } }, comment: { body: 'said again' } });
    const audit = await api('get', '/admin/audit?action=issue.delete', admin).expect(200);
    expect(audit.body.some((event: { target: { name: string } }) => event.target.name === `${full}#${issue.number}`)).toBe(true);
    expect((await api('get', '/admin/audit?action=comment.delete', admin).expect(200)).body.length).toBeGreaterThan(0);
  });

  it('sends assignment, label and milestone changes as issues sub-types, to hooks that chose issues or the sub-type', async () => {
    const repo = await makeRepo(t, alice);
    const full = repo.full_name;
    await api('post', `/repos/${full}/hooks`)
      .send({ type: 'gitea', active: true, events: ['issues'], config: { url: `${sink.url}/issue-kinds`, content_type: 'json' } })
      .expect(201);
    await api('post', `/repos/${full}/hooks`)
      .send({ type: 'gitea', active: true, events: ['issue_milestone'], config: { url: `${sink.url}/milestone-only`, content_type: 'json' } })
      .expect(201);
    const label = (await api('post', `/repos/${full}/labels`).send({ name: 'bug', color: '#ff0000' }).expect(201)).body;
    const milestone = (await api('post', `/repos/${full}/milestones`).send({ title: 'v1' }).expect(201)).body;
    const issue = (
      await api('post', `/repos/${full}/issues`)
        .send({ title: 'kinds', assignees: [alice.name] })
        .expect(201)
    ).body;
    await api('patch', `/repos/${full}/issues/${issue.number}`).send({ milestone: milestone.id, assignees: [] }).expect(201);
    await api('post', `/repos/${full}/issues/${issue.number}/labels`)
      .send({ labels: [label.id] })
      .expect(200);
    await api('delete', `/repos/${full}/issues/${issue.number}/labels`).expect(204);
    await api('patch', `/repos/${full}/issues/${issue.number}`).send({ milestone: 0 }).expect(201);
    const received = (where: string) => [...new Map(forPath(where)(sink.requests).map((request) => [request.headers['x-gitea-delivery'], request])).values()];
    await sink.waitFor(() => received('/issue-kinds').length >= 7 && received('/milestone-only').length >= 2, 'issue sub-type events', 150_000);
    const seen = (where: string) =>
      received(where)
        .map((request) => `${request.headers['x-gitea-event']}/${request.headers['x-gitea-event-type']}:${request.json.action}`)
        .sort();
    expect(seen('/issue-kinds')).toEqual(
      [
        'issues/issues:opened',
        'issues/issue_assign:assigned',
        'issues/issue_assign:unassigned',
        'issues/issue_milestone:milestoned',
        'issues/issue_label:label_updated',
        'issues/issue_label:label_cleared',
        'issues/issue_milestone:demilestoned',
      ].sort(),
    );
    expect(seen('/milestone-only')).toEqual(['issues/issue_milestone:demilestoned', 'issues/issue_milestone:milestoned']);
    const milestoned = received('/issue-kinds').find((request) => request.json.action === 'milestoned')!.json;
    expect(milestoned).toMatchObject({
      number: issue.number,
      issue: { milestone: { id: milestone.id, title: 'v1' }, assignees: null },
      sender: { login: alice.name },
    });
    expect(
      received('/issue-kinds')
        .find((request) => request.json.action === 'label_updated')!
        .json.issue.labels.map((l: { name: string }) => l.name),
    ).toEqual(['bug']);
  });

  it('sends push events for the refs a mirror sync moved', async () => {
    const upstream = await GitUpstream.start();
    try {
      await client.ok(['init', '--bare', '--quiet', '--initial-branch', 'main', upstream.dir('source')]);
      const work = await client.workingCopy('main', { 'README.md': 'hello\n' });
      await client.ok(['push', '--quiet', upstream.dir('source'), 'main:main'], { cwd: work });
      const name = uniqueName('mirror');
      await api('post', '/repos/migrate')
        .send({ clone_addr: upstream.url('source'), repo_name: name, mirror: true, mirror_interval: '0' })
        .expect(201);
      const full = `${alice.name}/${name}`;
      await hook(full, { url: `${sink.url}/mirror` });
      fs.writeFileSync(path.join(work, 'new.txt'), 'new\n');
      await client.ok(['add', 'new.txt'], { cwd: work });
      await client.ok(['commit', '--quiet', '-m', 'upstream change'], { cwd: work });
      await client.ok(['push', '--quiet', upstream.dir('source'), 'main:main', 'main:refs/heads/side'], { cwd: work });
      await api('post', `/repos/${full}/mirror-sync`).expect(200);
      await sink.waitFor(
        (requests) => forPath('/mirror')(requests).filter((request) => request.headers['x-forgejo-event'] === 'push').length >= 2,
        'mirror push events',
      );
      const received = forPath('/mirror')(sink.requests);
      const main = received.find((request) => request.headers['x-forgejo-event'] === 'push' && request.json.ref === 'refs/heads/main')!;
      expect(main.json.commits.map((commit: any) => commit.message)).toEqual(['upstream change\n']);
      expect(main.json.sender.login).toBe(alice.name);
      expect(received.some((request) => request.headers['x-forgejo-event'] === 'create' && request.json.ref === 'refs/heads/side')).toBe(true);
    } finally {
      await upstream.close();
    }
  });

  it("sends package events to the owner's hooks when a version is created and deleted", async () => {
    await api('post', '/user/hooks')
      .send({ type: 'forgejo', active: true, events: ['package'], config: { url: `${sink.url}/packages/${alice.name}`, content_type: 'json' } })
      .expect(201);
    const file = `/api/packages/${alice.name}/generic/tool/1.0.0/tool.bin`;
    await t.http.put(file).set(withToken(alice.token)).send(Buffer.from('binary')).expect(201);
    await t.http.put(`/api/packages/${alice.name}/generic/tool/1.0.0/second.bin`).set(withToken(alice.token)).send(Buffer.from('more')).expect(201);
    await t.http.delete(`/api/packages/${alice.name}/generic/tool/1.0.0`).set(withToken(alice.token)).expect(204);
    await sink.waitFor((requests) => forPath(`/packages/${alice.name}`)(requests).length >= 2, 'package events');
    const received = forPath(`/packages/${alice.name}`)(sink.requests);
    expect(received.map((request) => request.headers['x-forgejo-event'])).toEqual(['package', 'package']);
    expect(received.map((request) => request.json.action)).toEqual(['created', 'deleted']);
    expect(received[0].json).toMatchObject({ package: { name: 'tool', version: '1.0.0', type: 'generic' }, sender: { login: alice.name } });
  });

  it('sends the package deleted event when the last file of a version is deleted (the version goes with it), not before', async () => {
    const hookPath = `/package-files/${alice.name}`;
    await api('post', '/user/hooks')
      .send({ type: 'forgejo', active: true, events: ['package'], config: { url: `${sink.url}${hookPath}`, content_type: 'json' } })
      .expect(201);
    const version = `/api/packages/${alice.name}/generic/files-tool/2.0.0`;
    await t.http.put(`${version}/a.bin`).set(withToken(alice.token)).send(Buffer.from('a')).expect(201);
    await t.http.put(`${version}/b.bin`).set(withToken(alice.token)).send(Buffer.from('b')).expect(201);
    await t.http.delete(`${version}/a.bin`).set(withToken(alice.token)).expect(204);
    await t.http.delete(`${version}/b.bin`).set(withToken(alice.token)).expect(204);
    // A later event marks the end: per hook, deliveries arrive in the order of their events.
    await t.http.put(`/api/packages/${alice.name}/generic/sentinel/1.0.0/s.bin`).set(withToken(alice.token)).send(Buffer.from('s')).expect(201);
    await sink.waitFor((requests) => forPath(hookPath)(requests).length >= 3, 'package events');
    const received = forPath(hookPath)(sink.requests);
    expect(received.map((request) => `${request.json.action} ${request.json.package.name}`)).toEqual([
      'created files-tool',
      'deleted files-tool',
      'created sentinel',
    ]);
    expect(received[1].json).toMatchObject({ action: 'deleted', package: { name: 'files-tool', version: '2.0.0' }, sender: { login: alice.name } });
  });

  it("documents the hook and status routes with Forgejo's operation ids", () => {
    const document = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'openapi', 'swagger.v1.json'), 'utf8'));
    const ids = new Set<string>();
    for (const item of Object.values<Record<string, { operationId?: string }>>(document.paths))
      for (const operation of Object.values(item)) if (operation?.operationId) ids.add(operation.operationId);
    for (const id of [
      'repoListHooks',
      'repoCreateHook',
      'repoGetHook',
      'repoEditHook',
      'repoDeleteHook',
      'repoTestHook',
      'orgListHooks',
      'orgCreateHook',
      'orgGetHook',
      'orgEditHook',
      'orgDeleteHook',
      'userListHooks',
      'userCreateHook',
      'userGetHook',
      'userEditHook',
      'userDeleteHook',
      'adminListHooks',
      'adminCreateHook',
      'adminGetHook',
      'adminEditHook',
      'adminDeleteHook',
      'repoCreateStatus',
      'repoListStatuses',
      'repoListStatusesByRef',
      'repoGetCombinedStatusByRef',
    ]) {
      expect(ids).toContain(id);
    }
  });

  it('keeps commit statuses: list, list by ref, combined view with the latest per context and its precedence', async () => {
    const { full, work } = await repoWithPush();
    await push(full, work, 'main');
    const sha = (await client.ok(['rev-parse', 'HEAD'], { cwd: work })).trim();
    const post = (body: object, user: TestUser = alice) => api('post', `/repos/${full}/statuses/${sha}`, user).send(body);
    expect((await post({ state: 'bogus' })).status).toBe(422);
    expect((await api('post', `/repos/${full}/statuses/${'1'.repeat(40)}`).send({ state: 'success' })).status).toBe(422);
    expect((await post({ state: 'success' }, bob)).status).toBe(403);
    expect((await api('post', `/repos/${full}/statuses/${sha}`, null).send({ state: 'success' })).status).toBe(401);
    const first = await post({ state: 'pending', context: 'ci/a', description: 'running' });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      status: 'pending',
      context: 'ci/a',
      description: 'running',
      url: expect.stringContaining(`/repos/${full}/statuses/${sha}`),
      creator: { login: alice.name },
    });
    await post({ state: 'success', context: 'ci/a' }).expect(201);
    await post({ state: 'warning', context: 'ci/b' }).expect(201);
    const all = await api('get', `/repos/${full}/statuses/${sha}`, bob);
    expect(all.status).toBe(200);
    expect(all.body).toHaveLength(3);
    expect((await api('get', `/repos/${full}/commits/main/statuses?state=success`, bob)).body).toHaveLength(1);
    const combined = await api('get', `/repos/${full}/commits/main/status`, bob);
    expect(combined.status).toBe(200);
    expect(combined.body).toMatchObject({ sha, state: 'warning', total_count: 2 });
    expect(combined.body.statuses.map((status: any) => `${status.context}=${status.status}`)).toEqual(['ci/a=success', 'ci/b=warning']);
    await post({ state: 'error', context: 'ci/b' }).expect(201);
    expect((await api('get', `/repos/${full}/commits/${sha}/status`)).body.state).toBe('failure');
    const empty = await api('get', `/repos/${full}/commits/${'2'.repeat(40)}/status`);
    expect(empty.status).toBe(200);
    expect(empty.body.total_count).toBe(0);
  });
});

/** The host policy: loopback and private refused by default, even behind a DNS name; allowed by the setting. */
describe('webhook host policy', () => {
  let t: TestApp;
  let sink: WebhookSink;
  let alice: TestUser;

  beforeAll(async () => {
    t = await startTestApp({}, (config) => {
      config.webhooks.retryBaseMs = 50;
      config.webhooks.pollMs = 100;
    });
    sink = await new WebhookSink().start();
    alice = await makeUser(t);
  });

  afterAll(async () => {
    await sink?.stop();
    await t?.close();
  });

  it('refuses loopback addresses and names that resolve to them by default, without retrying', async () => {
    const name = uniqueName('repo');
    await makeRepo(t, alice, { name });
    const full = `${alice.name}/${name}`;
    const ids: number[] = [];
    for (const url of [`${sink.url}/direct`, `http://localhost:${sink.port}/named`, `http://10.0.0.1:${sink.port}/private`]) {
      const created = await t.http
        .post(t.api(`/repos/${full}/hooks`))
        .set(withToken(alice.token))
        .send({ type: 'forgejo', active: true, config: { url, content_type: 'json' } });
      expect(created.status).toBe(201);
      ids.push(created.body.id);
    }
    await t.http
      .post(t.api(`/repos/${full}/contents/a.txt`))
      .set(withToken(alice.token))
      .send({ content: 'YQ==' })
      .expect(201);
    for (const id of ids) {
      let history: any[] = [];
      for (let round = 0; round < 300 && !history.some((delivery) => delivery.event === 'push' && delivery.status === 'failed'); round++) {
        history = (await t.http.get(t.api(`/repos/${full}/hooks/${id}/deliveries`)).set(withToken(alice.token))).body;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const pushed = history.find((delivery) => delivery.event === 'push');
      expect(pushed).toMatchObject({ status: 'failed', attempts: 1, response_status: 0 });
      expect(pushed.response_body).toContain('WEBHOOK_ALLOWED_HOSTS');
    }
    expect(sink.requests).toHaveLength(0);
  });
});

/**
 * A receiver that accepts and never answers gives the delivery worker back after WEBHOOK_FIRST_BYTE_TIMEOUT (the
 * whole request's WEBHOOK_TIMEOUT is 600 s here), and the worker it frees goes to the other owner first.
 */
describe('a webhook receiver that accepts and never answers', () => {
  it('fails the hung delivery at the first-byte deadline, and the other owner is sent to before the hung owner again', async () => {
    const t = await startTestApp(
      {
        WEBHOOK_ALLOWED_HOSTS: 'loopback',
        ALLOW_LOCAL_NETWORKS: 'true',
        WEBHOOK_DELIVERY_WORKERS: '2',
        WEBHOOK_MAX_ATTEMPTS: '1',
        WEBHOOK_TIMEOUT: '600',
        WEBHOOK_FIRST_BYTE_TIMEOUT: '5',
      },
      (config) => {
        config.webhooks.pollMs = 100;
      },
    );
    // What both receivers saw, in the order they saw it.
    const seen: string[] = [];
    const sockets = new Set<net.Socket>();
    const hung = net.createServer((socket) => {
      sockets.add(socket);
      socket.once('data', () => seen.push('hung request'));
      socket.on('close', () => {
        sockets.delete(socket);
        seen.push('hung closed');
      });
    });
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', () => resolve()));
    const hungUrl = `http://127.0.0.1:${(hung.address() as net.AddressInfo).port}/hung`;
    const sink = await new WebhookSink().start();
    sink.answer = () => {
      seen.push('other owner');
      return { status: 200 };
    };
    const until = async (condition: () => boolean | Promise<boolean>, what: string) => {
      for (let round = 0; !(await condition()); round++) {
        if (round > 2000) throw new Error(`gave up waiting for ${what}; seen: ${seen.join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    try {
      const alice = await makeUser(t);
      const bob = await makeUser(t);
      const repoOf = async (user: TestUser, urls: string[]) => {
        const name = uniqueName('repo');
        await makeRepo(t, user, { name });
        const full = `${user.name}/${name}`;
        const hooks: number[] = [];
        for (const url of urls) {
          const created = await t.http
            .post(t.api(`/repos/${full}/hooks`))
            .set(withToken(user.token))
            .send({ type: 'forgejo', active: true, events: ['issues'], config: { url, content_type: 'json' } });
          expect(created.status).toBe(201);
          hooks.push(created.body.id);
        }
        // An issue: a write that queues one delivery per hook without waiting for git.
        const write = (title: string) =>
          t.http
            .post(t.api(`/repos/${full}/issues`))
            .set(withToken(user.token))
            .send({ title })
            .expect(201);
        return { full, hooks, write };
      };
      const stalling = await repoOf(alice, [hungUrl, hungUrl]);
      const other = await repoOf(bob, [`${sink.url}/other`]);
      // Alice's two hooks hold both workers; then, well within the deadline, she queues one more delivery for
      // each, and Bob one.
      await stalling.write('first');
      await until(() => seen.filter((event) => event === 'hung request').length === 2, 'both workers held by the receiver');
      await stalling.write('second');
      await other.write('other');
      await until(() => seen.filter((event) => event === 'hung closed').length === 4 && seen.includes('other owner'), 'every hung request given up');
      // Bob waited only for a worker to come free, and had it before Alice's hooks had their second turn done.
      const lastHung = seen.lastIndexOf('hung request');
      expect(seen.indexOf('hung closed')).toBeLessThan(seen.indexOf('other owner'));
      expect(seen.indexOf('other owner')).toBeLessThan(lastHung);
      expect(seen.filter((event) => event === 'hung request')).toHaveLength(4);
      // Each hung delivery is in the history as failed, saying why.
      for (const id of stalling.hooks) {
        let history: any[] = [];
        await until(async () => {
          history = (
            await t.http
              .get(t.api(`/repos/${stalling.full}/hooks/${id}/deliveries`))
              .set(withToken(alice.token))
              .expect(200)
          ).body;
          return history.length === 2 && history.every((delivery) => delivery.status !== 'pending');
        }, 'the hung deliveries recorded');
        for (const delivery of history) {
          expect(delivery).toMatchObject({ status: 'failed', attempts: 1, response_status: 0 });
          expect(delivery.response_body).toBe('no answer within 5000 ms of the request (WEBHOOK_FIRST_BYTE_TIMEOUT)');
        }
      }
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => hung.close(resolve));
      await sink.stop();
      await t.close();
    }
  });
});

/** The outbox survives the process: deliveries queued before a stop are sent by the next start, same UUIDs. */
describe('webhook deliveries across a restart', () => {
  it('sends the deliveries a stopped process left pending, once each, after a restart on the same database', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-webhook-restart-'));
    const database = usesMysql() ? await createMysqlDatabase() : undefined;
    const env = { DATA_DIR: dataDir, WEBHOOK_ALLOWED_HOSTS: 'loopback', ...(database ? { DATABASE_URL: database.url } : {}) };
    const sink = await new WebhookSink().start();
    let first: TestApp | undefined;
    let second: TestApp | undefined;
    try {
      first = await startTestApp(env, (config) => {
        config.webhooks.pollMs = 0;
      });
      const alice = await makeUser(first);
      const name = uniqueName('repo');
      await makeRepo(first, alice, { name });
      const full = `${alice.name}/${name}`;
      await first.http
        .post(first.api(`/repos/${full}/hooks`))
        .set(withToken(alice.token))
        .send({ type: 'forgejo', active: true, config: { url: `${sink.url}/restart`, content_type: 'json' } })
        .expect(201);
      // This process stops sending: what it records now stays in the outbox.
      await first.app.get(WebhookDispatcher).onApplicationShutdown();
      for (const file of ['1.txt', '2.txt', '3.txt']) {
        await first.http
          .post(first.api(`/repos/${full}/contents/${file}`))
          .set(withToken(alice.token))
          .send({ content: Buffer.from(file).toString('base64') })
          .expect(201);
      }
      const pending = await first.dataSource.query('SELECT uuid FROM webhook_delivery WHERE done = 0 ORDER BY id');
      expect(pending.length).toBe(3);
      await first.close();
      first = undefined;
      expect(sink.requests).toHaveLength(0);
      second = await startTestApp(env, (config) => {
        config.webhooks.pollMs = 100;
      });
      await sink.waitFor((requests) => requests.length >= 3, 'the pending deliveries');
      expect(sink.requests.map((request) => request.headers['x-forgejo-delivery'])).toEqual(pending.map((row: { uuid: string }) => row.uuid));
      expect(sink.requests.map((request) => request.headers['x-forgejo-event'])).toEqual(['push', 'push', 'push']);
      const messages = sink.requests.map((request) => String(request.json.head_commit.message));
      ['1.txt', '2.txt', '3.txt'].forEach((file, index) => expect(messages[index]).toContain(file));
    } finally {
      await first?.close();
      await second?.close();
      await sink.stop();
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/** Deliveries leave from a thread of the server's own, started once a hook exists and again after it died. */
/** A process's parent, session and nice value, from /proc (Linux). */
function processStat(pid: number, file = `/proc/${pid}/stat`): { ppid: number; session: number; nice: number } {
  const fields = fs.readFileSync(file, 'utf8').split(') ')[1].split(' ');
  return { ppid: Number(fields[1]), session: Number(fields[3]), nice: Number(fields[16]) };
}

describe('the webhook delivery process', () => {
  it('starts with the first hook in a session of its own at low priority, starts again after it died, ends with the server', async () => {
    const sink = await new WebhookSink().start();
    // The default nice value (19), which test apps otherwise lower to 0.
    const t = await startTestApp({ WEBHOOK_ALLOWED_HOSTS: 'loopback', WEBHOOK_SENDER_NICE: '19' }, (config) => {
      config.webhooks.pollMs = 100;
    });
    let first: number | null = null;
    let second: number | null = null;
    try {
      const dispatcher = t.app.get(WebhookDispatcher);
      const alice = await makeUser(t);
      const name = uniqueName('repo');
      await makeRepo(t, alice, { name });
      const full = `${alice.name}/${name}`;
      const write = (file: string) =>
        t.http
          .post(t.api(`/repos/${full}/contents/${file}`))
          .set(withToken(alice.token))
          .send({ content: Buffer.from(file).toString('base64') })
          .expect(201);
      await write('before-any-hook.txt');
      expect(dispatcher.pid).toBeNull();
      const created = await t.http
        .post(t.api(`/repos/${full}/hooks`))
        .set(withToken(alice.token))
        .send({ type: 'forgejo', active: true, config: { url: `${sink.url}/process`, content_type: 'json' } })
        .expect(201);
      await write('first.txt');
      // Its outcome recorded too: the process that takes over then has nothing of it to send again.
      let history: { status: string }[] = [];
      // At the lowest priority on a loaded machine the delivery may wait long for the CPU: up to two minutes.
      for (let round = 0; round < 2400 && history[0]?.status !== 'delivered'; round++) {
        if (round > 0) await new Promise((resolve) => setTimeout(resolve, 50));
        history = (
          await t.http
            .get(t.api(`/repos/${full}/hooks/${created.body.id}/deliveries`))
            .set(withToken(alice.token))
            .expect(200)
        ).body;
      }
      expect(history.map((delivery) => delivery.status)).toEqual(['delivered']);
      first = dispatcher.pid;
      expect(first).not.toBeNull();
      expect(first).not.toBe(process.pid);
      if (process.platform === 'linux') {
        // A session of its own (the kernel's autogroups share the CPU between sessions first). On MySQL/MariaDB
        // all of it at the lowest priority; on SQLite, whose one write lock the server's writes wait for, its
        // bookkeeping at normal priority (never starved while holding it) and only its sending thread lowest.
        const lowest = usesMysql() ? 19 : 0;
        const stat = processStat(first!);
        expect(stat).toEqual({ ppid: process.pid, session: first, nice: lowest });
        if (fs.existsSync(`/proc/${first}/autogroup`)) expect(fs.readFileSync(`/proc/${first}/autogroup`, 'utf8')).toMatch(new RegExp(` nice ${lowest}\n?$`));
        const threads = fs.readdirSync(`/proc/${first}/task`).map((thread) => processStat(Number(thread), `/proc/${first}/task/${thread}/stat`).nice);
        expect(threads).toContain(19);
      }
      // The process goes away as a crash would take it; the next event starts another, which delivers.
      process.kill(first!, 'SIGKILL');
      await write('second.txt');
      const messages = () => sink.requests.map((request) => String(request.json.head_commit.message));
      await sink.waitFor(() => messages().some((message) => message.includes('second.txt')), 'the delivery after the process died');
      second = dispatcher.pid;
      expect(second).not.toBeNull();
      expect(second).not.toBe(first);
      // At least once: on a saturated machine the first may have been sent twice (its answer came after the
      // delivery's time limit), never after the second.
      expect([...new Set(messages())]).toEqual([expect.stringContaining('first.txt'), expect.stringContaining('second.txt')]);
    } finally {
      await t.close();
      await sink.stop();
    }
    // It ended with the server.
    expect(processRunning(second!)).toBe(false);
    // A ceiling for a process at the lowest priority on a loaded machine (two deliveries), not a speed.
  }, 360_000);
});
