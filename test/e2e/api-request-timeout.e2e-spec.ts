import { setTimeout as sleep } from 'node:timers/promises';
import { CredentialChain } from '../../src/auth/credentials';
import { DownloadsService } from '../../src/content/downloads.service';
import { MigrationsService } from '../../src/mirrors/migrations.service';
import { ReleaseAttachmentsService } from '../../src/releases/release-attachments.service';
import { RepositoryListsService } from '../../src/repos/repository-lists.service';
import { makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/** A handler the test holds: `entered` once the handler runs, and it goes on only when `release` is called. */
function hold<T extends object, K extends keyof T>(target: T, method: K) {
  const original = (target[method] as (...args: unknown[]) => Promise<unknown>).bind(target);
  let entered!: () => void;
  let release!: () => void;
  const enteredPromise = new Promise<void>((resolve) => (entered = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const spy = jest.spyOn(target, method as never).mockImplementation((async (...args: unknown[]) => {
    entered();
    await released;
    return original(...args);
  }) as never);
  return { entered: enteredPromise, release, restore: () => spy.mockRestore() };
}

/**
 * API_REQUEST_TIMEOUT: an /api/v1 JSON handler that has not
 * answered in time gets a 503 with the standard error body; routes that stream (uploads, downloads) are not cut.
 * The timeout is made small only around the held handlers; the test never depends on how fast anything runs:
 * the held handler cannot answer before the test releases it, and the timeout's timer, set before the test's
 * own wait, fires first (timers of shorter delay set earlier expire first). Where the 503 is awaited, whether the
 * request reached the held handler before its timeout fired is left open: on a loaded machine it may not have.
 */
describe('API request timeout', () => {
  let t: TestApp;
  let alice: TestUser;
  const TIMEOUT_MS = 200;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await makeUser(t);
  });
  afterEach(() => {
    t.config.http.apiRequestTimeoutMs = 60_000;
  });
  afterAll(() => t.close());

  it('defaults to 60 seconds', () => {
    expect(t.config.http.apiRequestTimeoutMs).toBe(60_000);
  });

  it('answers 503 with the standard error body when a JSON handler has not answered in time, and the server goes on', async () => {
    const held = hold(t.app.get(RepositoryListsService), 'search');
    t.config.http.apiRequestTimeoutMs = TIMEOUT_MS;
    try {
      const answer = await t.http.get(t.api('/repos/search')).set(withToken(alice.token));
      expect(answer.status).toBe(503);
      expect(answer.body).toEqual({ message: 'the request took too long to answer; try again later', url: 'http://anvil.test/api/swagger' });
      // Not waited for: on a loaded machine the timeout may fire before the request reaches the held handler.
    } finally {
      held.release();
      held.restore();
    }
    // The late result is dropped without harm; the next request is answered normally.
    await t.http.get(t.api('/repos/search')).set(withToken(alice.token)).expect(200);
  });

  it("covers authentication's database lookups: a credential check that hangs answers 503, and the server goes on", async () => {
    const held = hold(t.app.get(CredentialChain), 'authenticate');
    t.config.http.apiRequestTimeoutMs = TIMEOUT_MS;
    try {
      const answer = await t.http.get(t.api('/user')).set(withToken(alice.token));
      expect(answer.status).toBe(503);
      expect(answer.body).toEqual({ message: 'the request took too long to answer; try again later', url: 'http://anvil.test/api/swagger' });
      // Not waited for: on a loaded machine the timeout may fire before the request reaches the held handler.
    } finally {
      held.release();
      held.restore();
    }
    await t.http.get(t.api('/user')).set(withToken(alice.token)).expect(200);
  });

  it('does not cut a download, which writes its own response', async () => {
    const repo = await makeRepo(t, alice, { autoInit: true });
    const held = hold(t.app.get(DownloadsService), 'raw');
    t.config.http.apiRequestTimeoutMs = TIMEOUT_MS;
    try {
      const pending = t.http
        .get(t.api(`/repos/${alice.name}/${repo.name}/raw/README.md`))
        .set(withToken(alice.token))
        .then((response) => response);
      await held.entered;
      await sleep(TIMEOUT_MS * 3);
      held.release();
      const answer = await pending;
      expect(answer.status).toBe(200);
      expect(answer.text).toContain(repo.name);
    } finally {
      held.release();
      held.restore();
    }
  });

  it('does not cut a streamed upload', async () => {
    const repo = await makeRepo(t, alice, { autoInit: true });
    const release = await t.http
      .post(t.api(`/repos/${alice.name}/${repo.name}/releases`))
      .set(withToken(alice.token))
      .send({ tag_name: 'v1' })
      .expect(201);
    const held = hold(t.app.get(ReleaseAttachmentsService), 'upload');
    t.config.http.apiRequestTimeoutMs = TIMEOUT_MS;
    try {
      const pending = t.http
        .post(t.api(`/repos/${alice.name}/${repo.name}/releases/${release.body.id}/assets?name=slow.bin`))
        .set(withToken(alice.token))
        .set('Content-Type', 'application/octet-stream')
        .send(Buffer.from('slow upload'))
        .then((response) => response);
      await held.entered;
      await sleep(TIMEOUT_MS * 3);
      held.release();
      const answer = await pending;
      expect(answer.status).toBe(201);
      expect(answer.body.size).toBe('slow upload'.length);
    } finally {
      held.release();
      held.restore();
    }
  });

  it('does not cut a migration, whose clone has its own longer limit', async () => {
    const held = hold(t.app.get(MigrationsService), 'migrate');
    t.config.http.apiRequestTimeoutMs = TIMEOUT_MS;
    try {
      // Refused by the service once released (no such source): an answer from the handler, not the timeout's 503.
      const pending = t.http
        .post(t.api('/repos/migrate'))
        .set(withToken(alice.token))
        .send({ clone_addr: 'ftp://example.invalid/x.git', repo_name: 'held' })
        .then((response) => response);
      await held.entered;
      await sleep(TIMEOUT_MS * 3);
      held.release();
      expect((await pending).status).toBe(422);
    } finally {
      held.release();
      held.restore();
    }
  });
});
