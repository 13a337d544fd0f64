import { MARKDOWN_CSP } from '../../src/markdown/markdown.controller';
import { makeOrg, makeUser, TestUser, withToken } from '../support/factories';
import { UNFINISHABLE_MARKDOWN } from '../support/markdown-documents';
import { startTestApp, TestApp } from '../support/test-app';

/** The renderer's monopoly and amplification, spoofed mentions, CSP. */
describe('markdown abuse', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  const ROOT = 'http://anvil.test/';
  const render = (user: TestUser | string, body: Record<string, unknown>) =>
    t.http
      .post(t.api('/markdown'))
      .set(withToken(typeof user === 'string' ? user : user.token))
      .send(body);
  const busyWorkers = async () => {
    const series = 'anvil_markdown_render_pool{state="busy"} ';
    const line = (await t.http.get('/metrics').expect(200)).text.split('\n').find((candidate) => candidate.startsWith(series));
    return Number(line?.slice(series.length));
  };

  beforeAll(async () => {
    t = await startTestApp({ MARKDOWN_RENDER_BUDGET_MS: '3000', MARKDOWN_MAX_OUTPUT_SIZE: '256KiB', METRICS_ENABLED: 'true' });
    alice = await makeUser(t);
    bob = await makeUser(t);
    // Two renders at once start both workers, so that no worker start-up is timed below.
    await Promise.all([render(alice, { Text: 'warm' }).expect(200), render(bob, { Text: 'up' }).expect(200)]);
  });
  afterAll(() => t.close());

  it("5: one user's pathological document neither holds up another user's render nor runs twice at once", async () => {
    const events: string[] = [];
    const slow = render(alice, { Text: UNFINISHABLE_MARKDOWN }).then((response) => {
      events.push('pathological');
      return response;
    });
    // Wait until the slow render holds its worker (the pool's gauge says so): a second one by the same user is
    // then refused. Asking before that would race the slow document's upload.
    while (events.length === 0 && (await busyWorkers()) < 1) await new Promise((resolve) => setTimeout(resolve, 20));
    const second = await render(alice, { Text: 'hi' });
    expect(second.status).toBe(429);
    expect(second.headers['retry-after']).toBe('1');
    const quick = await render(bob, { Text: '*quick*' }).expect(200);
    events.push('other user');
    expect(quick.text).toBe('<p><em>quick</em></p>');
    expect((await slow).status).toBe(500);
    expect(events).toEqual(['other user', 'pathological']);
  });

  it('5: a reference-link document that multiplies into far more HTML than the output cap is refused 413', async () => {
    // The reported document (25 KB in, 25 MB out) scaled down to the cap this app runs with (256 KiB):
    // 2 KB in, about 500 KB out.
    const url = `https://example.org/${'x'.repeat(1000)}`;
    const text = `[a]: ${url}\n\n${'[a] '.repeat(500)}`;
    expect(Buffer.byteLength(text)).toBeLessThan(4 * 1024);
    const response = await render(alice, { Text: text }).expect(413);
    expect(response.body.message).toBe('rendered document is too large: over 262144 bytes');
    // Under the cap, the same kind of document renders.
    await render(alice, { Text: `[a]: ${url}\n\n${'[a] '.repeat(100)}` }).expect(200);
  });

  it('14: raw HTML cannot pass a link to anywhere off as a mention; real mentions keep their class', async () => {
    const html = (await render(alice, { Text: `<a class="mention" href="https://evil.example/x">@${bob.name}</a> and @${bob.name}`, Mode: 'gfm' }).expect(200))
      .text;
    expect(html).toContain('href="https://evil.example/x"');
    expect(html).not.toMatch(/<a[^>]*class="mention"[^>]*href="https:\/\/evil/);
    expect(html).not.toMatch(/<a[^>]*href="https:\/\/evil[^>]*class="mention"/);
    expect(html).toContain(`<a href="${ROOT}${bob.name}" class="mention">@${bob.name}</a>`);
  });

  it('15: a public-only token links only users it may see', async () => {
    const limited = await makeUser(t, { visibility: 'limited' });
    const privateOrg = await makeOrg(t, alice.user, { visibility: 'private' });
    const publicOnly = await makeUser(t, { scopes: ['public-only', 'all'] });
    const text = `@${limited.name} @${privateOrg.name} @${bob.name}`;
    await t.http
      .get(t.api(`/users/${limited.name}`))
      .set(withToken(publicOnly.token))
      .expect(403);
    const html = (await render(publicOnly.token, { Text: text, Mode: 'gfm' }).expect(200)).text;
    expect(html).not.toContain(`href="${ROOT}${limited.name}"`);
    expect(html).not.toContain(`href="${ROOT}${privateOrg.name}"`);
    expect(html).toContain(`href="${ROOT}${bob.name}"`);
    // A full token of a signed-in user does link the limited user.
    expect((await render(bob, { Text: text, Mode: 'gfm' }).expect(200)).text).toContain(`href="${ROOT}${limited.name}"`);
  });

  it('18: rendered HTML is served with a Content-Security-Policy', async () => {
    const json = await render(alice, { Text: 'x' }).expect(200);
    expect(json.headers['content-security-policy']).toBe(MARKDOWN_CSP);
    const raw = await t.http.post(t.api('/markdown/raw')).set(withToken(alice.token)).send('x').expect(200);
    expect(raw.headers['content-security-policy']).toContain("default-src 'none'");
  });
});
