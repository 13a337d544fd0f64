import { makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';
import { UNFINISHABLE_MARKDOWN } from '../support/markdown-documents';
import { findDanger, XSS_VECTORS } from './fixtures/xss-vectors';

const HTML = 'text/html; charset=utf-8';
const ROOT = 'http://anvil.test/';

describe('markdown rendering', () => {
  let t: TestApp;
  let caller: TestUser;
  let admin: TestUser;
  let alice: TestUser;
  let hidden: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    caller = await makeUser(t);
    admin = await makeUser(t, { admin: true });
    alice = await makeUser(t, { name: `Alice${uniqueName('m')}` });
    hidden = await makeUser(t, { visibility: 'private' });
  });
  afterAll(() => t.close());

  const markdown = (body: unknown, token = caller.token) =>
    t.http.post(t.api('/markdown')).set(withToken(token)).set('Content-Type', 'application/json').send(JSON.stringify(body));
  const html = async (body: unknown, token = caller.token): Promise<string> => {
    const response = await markdown(body, token).expect(200);
    expect(response.headers['content-type']).toBe(HTML);
    return response.text;
  };
  const raw = (text: string, contentType = 'text/plain') =>
    t.http.post(t.api('/markdown/raw')).set(withToken(caller.token)).set('Content-Type', contentType).send(text);

  describe('GFM in every mode', () => {
    it.each(['markdown', 'gfm', 'comment', '', 'no-such-mode'])('mode %p renders tables, task lists, strikethrough and autolinks', async (mode) => {
      const out = await html({
        Text: '| a | b |\n|---|:-:|\n| 1 | 2 |\n\n- [x] done\n- [ ] todo\n\n~~gone~~ https://example.com/x and www.example.org',
        Mode: mode,
      });
      expect(out).toContain('<table>');
      expect(out).toContain('<th align="center">b</th>');
      expect(out).toContain('<td>1</td>');
      expect(out).toContain('<ul class="contains-task-list">');
      expect(out).toContain('<li class="task-list-item"><input type="checkbox" checked disabled> done</li>');
      expect(out).toContain('<li class="task-list-item"><input type="checkbox" disabled> todo</li>');
      expect(out).toContain('<del>gone</del>');
      expect(out).toContain('<a href="https://example.com/x" rel="nofollow">https://example.com/x</a>');
      expect(out).toContain('<a href="http://www.example.org" rel="nofollow">www.example.org</a>');
    });

    it('gives headings unique user-content- ids', async () => {
      const out = await html({ Text: '# Hello World\n\n## Hello World\n\n### Ünïcode & co' });
      expect(out).toContain('<h1 id="user-content-hello-world">Hello World</h1>');
      expect(out).toContain('<h2 id="user-content-hello-world-1">Hello World</h2>');
      expect(out).toContain('<h3 id="user-content-ünïcode--co">');
    });

    it('prefixes ids the author writes, so they cannot clobber the page', async () => {
      expect(await html({ Text: '<div id="main" name="n">x</div>' })).toContain('<div id="user-content-main" name="user-content-n">x</div>');
    });

    it('keeps harmless inline HTML', async () => {
      expect(await html({ Text: 'press <kbd>Ctrl</kbd>\n\n<details><summary>more</summary>hidden</details>' })).toContain('<kbd>Ctrl</kbd>');
    });

    it('renders code without touching it', async () => {
      const out = await html({ Text: '```js\nconst a = "<b>";\n```', Mode: 'gfm' });
      expect(out).toContain('<pre><code class="language-js">const a = "&#x3C;b>";\n</code></pre>');
    });

    it('answers 200 with an empty body for empty text, and for a body without Text', async () => {
      expect(await html({ Text: '' })).toBe('');
      expect(await html({})).toBe('');
    });
  });

  describe('modes', () => {
    it('markdown mode does no special processing: no mentions, no wiki links, relative links untouched', async () => {
      const out = await html({ Text: `@${alice.name} [doc](docs/a.md) [[Page]]`, Mode: 'markdown', Context: 'owner/repo', Wiki: true });
      expect(out).toBe(`<p>@${alice.name} <a href="docs/a.md">doc</a> [[Page]]</p>`);
    });

    it('an unknown mode is markdown, not an error', async () => {
      const out = await html({ Text: `@${alice.name}\n[doc](docs/a.md)`, Mode: 'GFM', Context: 'owner/repo' });
      expect(out).toBe(`<p>@${alice.name}\n<a href="docs/a.md">doc</a></p>`);
    });

    it('gfm mode keeps single newlines as they are', async () => {
      expect(await html({ Text: 'one\ntwo', Mode: 'gfm' })).toBe('<p>one\ntwo</p>');
    });

    it('comment mode turns single newlines into <br>', async () => {
      expect(await html({ Text: 'one\ntwo\n\nthree', Mode: 'comment' })).toBe('<p>one<br>\ntwo</p>\n<p>three</p>');
    });

    it('/markdown/raw renders in markdown mode', async () => {
      const response = await raw(`# Title\n\n@${alice.name} [doc](docs/a.md)`).expect(200);
      expect(response.headers['content-type']).toBe(HTML);
      expect(response.text).toBe(`<h1 id="user-content-title">Title</h1>\n<p>@${alice.name} <a href="docs/a.md">doc</a></p>`);
    });
  });

  describe('issue references', () => {
    it('comment mode links #N, !N and owner/repo#N with class ref-issue, keywords in an issue-keyword span', async () => {
      const out = await html({ Text: 'Fixes #3, see !8 and (Alice/Repo#12)', Mode: 'comment' });
      expect(out).toBe(
        `<p><span class="issue-keyword">Fixes</span> <a href="${ROOT}issues/3" class="ref-issue">#3</a>, see <a href="${ROOT}pulls/8" class="ref-issue">!8</a> and (<a href="${ROOT}alice/repo/issues/12" class="ref-issue">Alice/Repo#12</a>)</p>`,
      );
    });

    it('gfm mode links only references to a repository; markdown mode none', async () => {
      expect(await html({ Text: 'reopens owner/repo#4 and #5', Mode: 'gfm' })).toBe(
        `<p><span class="issue-keyword">reopens</span> <a href="${ROOT}owner/repo/issues/4" class="ref-issue">owner/repo#4</a> and #5</p>`,
      );
      expect(await html({ Text: 'owner/repo#4 and #5', Mode: 'markdown' })).toBe('<p>owner/repo#4 and #5</p>');
    });

    it('leaves code, links, words ending in #N and the classes an author writes alone', async () => {
      const out = await html({
        Text: '`#1` [#2](https://example.com) a#3 <span class="issue-keyword">x</span> <a class="ref-issue" href="https://example.com">y</a>',
        Mode: 'comment',
      });
      expect(out).not.toContain('ref-issue');
      expect(out).not.toContain('issue-keyword');
      expect(out).toContain('<code>#1</code>');
    });
  });

  describe('mentions (gfm and comment)', () => {
    it.each(['gfm', 'comment'])('links an existing user in %s mode', async (mode) => {
      const out = await html({ Text: `hi @${alice.name}!`, Mode: mode });
      expect(out).toBe(`<p>hi <a href="${ROOT}${alice.name}" class="mention">@${alice.name}</a>!</p>`);
    });

    it('matches the name case-insensitively and links the stored spelling', async () => {
      const out = await html({ Text: `@${alice.name.toLowerCase()}`, Mode: 'gfm' });
      expect(out).toBe(`<p><a href="${ROOT}${alice.name}" class="mention">@${alice.name.toLowerCase()}</a></p>`);
    });

    it('leaves unknown users, e-mail addresses, code and existing links alone', async () => {
      const text = `@nobody${uniqueName()} mail@${alice.name}.com \`@${alice.name}\` [@${alice.name}](https://example.com)`;
      const out = await html({ Text: text, Mode: 'gfm' });
      expect(out).not.toContain('class="mention"');
      expect(out).toContain(`<code>@${alice.name}</code>`);
    });

    it('links several users in one document, each once looked up', async () => {
      const out = await html({ Text: `@${alice.name}, @${caller.name} and @${alice.name}.`, Mode: 'gfm' });
      expect(out.match(/class="mention"/g)).toHaveLength(3);
      expect(out).toContain(`<a href="${ROOT}${caller.name}" class="mention">@${caller.name}</a>`);
    });

    it('does not reveal a private user to a caller who may not see them', async () => {
      const text = `@${hidden.name}`;
      expect(await html({ Text: text, Mode: 'gfm' })).toBe(`<p>@${hidden.name}</p>`);
      expect(await html({ Text: text, Mode: 'gfm' }, hidden.token)).toContain('class="mention"');
      expect(await html({ Text: text, Mode: 'gfm' }, admin.token)).toContain('class="mention"');
    });
  });

  describe('relative links (gfm and comment)', () => {
    it('joins a relative Context onto ROOT_URL', async () => {
      const out = await html({ Text: '[doc](docs/a.md) ![img](img/x.png)', Mode: 'gfm', Context: 'owner/repo' });
      expect(out).toBe(`<p><a href="${ROOT}owner/repo/docs/a.md">doc</a> <img src="${ROOT}owner/repo/img/x.png" alt="img"></p>`);
    });

    it('treats a leading slash in Context as the same path under ROOT_URL', async () => {
      expect(await html({ Text: '[doc](a.md)', Mode: 'comment', Context: '/owner/repo/' })).toBe(`<p><a href="${ROOT}owner/repo/a.md">doc</a></p>`);
    });

    it('uses an absolute http(s) Context as it is; links outside the site are nofollow', async () => {
      const out = await html({ Text: '[doc](docs/a.md)', Mode: 'gfm', Context: 'https://example.com/owner/repo' });
      expect(out).toBe('<p><a href="https://example.com/owner/repo/docs/a.md" rel="nofollow">doc</a></p>');
    });

    it('resolves against ROOT_URL without a Context, and leaves fragments and absolute links as they are', async () => {
      const out = await html({ Text: '[a](a.md) [b](#top) [c](https://example.com/c) [d](mailto:x@example.com)', Mode: 'gfm' });
      expect(out).toBe(
        `<p><a href="${ROOT}a.md">a</a> <a href="#top">b</a> <a href="https://example.com/c" rel="nofollow">c</a> <a href="mailto:x@example.com">d</a></p>`,
      );
    });

    it('never turns a Context of another scheme into a link of that scheme', async () => {
      const out = await html({ Text: '[doc](a.md)', Mode: 'gfm', Context: 'javascript:alert(1)' });
      expect(out).toBe(`<p><a href="${ROOT}javascript:alert(1)/a.md">doc</a></p>`);
    });
  });

  describe('wiki links', () => {
    it('links [[Page]] and [[Label|Page]] under <context>/wiki when Wiki is true', async () => {
      const out = await html({ Text: 'see [[Home]] and [[the docs|Other Page]]', Mode: 'gfm', Context: 'owner/repo', Wiki: true });
      expect(out).toBe(`<p>see <a href="${ROOT}owner/repo/wiki/Home">Home</a> and <a href="${ROOT}owner/repo/wiki/Other-Page">the docs</a></p>`);
    });

    it('points [[images/x.png]] at the raw wiki file', async () => {
      const out = await html({ Text: '[[images/x.png]]', Mode: 'comment', Context: 'https://example.com/o/r', Wiki: true });
      expect(out).toBe('<p><img src="https://example.com/o/r/wiki/raw/images/x.png" alt="images/x.png"></p>');
    });

    it('leaves [[Page]] as text when Wiki is false or absent', async () => {
      expect(await html({ Text: '[[Home]]', Mode: 'gfm', Context: 'owner/repo', Wiki: false })).toBe('<p>[[Home]]</p>');
      expect(await html({ Text: '[[Home]]', Mode: 'gfm', Context: 'owner/repo' })).toBe('<p>[[Home]]</p>');
    });
  });

  describe('request body', () => {
    it('matches keys case-insensitively', async () => {
      const out = await html({ text: 'a\nb', MODE: 'comment', context: 'o/r', wIkI: true });
      expect(out).toBe('<p>a<br>\nb</p>');
      expect(await html({ tExT: '[[P]]', mode: 'gfm', CONTEXT: 'o/r', wiki: true })).toBe(`<p><a href="${ROOT}o/r/wiki/P">P</a></p>`);
    });

    it('takes the last of two spellings of one key, as Go does', async () => {
      const response = await t.http
        .post(t.api('/markdown'))
        .set(withToken(caller.token))
        .set('Content-Type', 'application/json')
        .send('{"Text":"first","text":"second"}')
        .expect(200);
      expect(response.text).toBe('<p>second</p>');
    });

    it('ignores unknown keys and null values', async () => {
      expect(await html({ Text: 'x', Mode: null, Other: 5 })).toBe('<p>x</p>');
    });

    it('accepts a form-encoded body', async () => {
      const response = await t.http
        .post(t.api('/markdown'))
        .set(withToken(caller.token))
        .type('form')
        .send({ text: 'a\nb', mode: 'comment', wiki: 'true' })
        .expect(200);
      expect(response.text).toBe('<p>a<br>\nb</p>');
    });

    it.each([
      [{ Text: 5 }, '[Text]: must be a string'],
      [{ text: ['a'] }, '[Text]: must be a string'],
      [{ Mode: true }, '[Mode]: must be a string'],
      [{ Context: {} }, '[Context]: must be a string'],
      [{ Wiki: 'yes' }, '[Wiki]: must be a boolean'],
      [{ wiki: 1 }, '[Wiki]: must be a boolean'],
    ])('a field of the wrong type (%j) is a 422 naming the field', async (body, message) => {
      const response = await markdown(body).expect(422);
      expect(response.body).toEqual({ message, url: `${ROOT}api/swagger` });
    });

    it.each(['[]', '"text"', '42', 'true'])('a body that is not an object (%s) is a 422', async (body) => {
      const response = await t.http.post(t.api('/markdown')).set(withToken(caller.token)).set('Content-Type', 'application/json').send(body).expect(422);
      expect(response.body.message).toContain('[Body]');
    });

    it('malformed JSON is a 400', async () => {
      const response = await t.http.post(t.api('/markdown')).set(withToken(caller.token)).set('Content-Type', 'application/json').send('{"Text": ').expect(400);
      expect(response.body).toEqual({ message: expect.stringContaining('invalid JSON'), url: `${ROOT}api/swagger` });
    });

    it('a missing or unsupported content type is a 422', async () => {
      const empty = await t.http.post(t.api('/markdown')).set(withToken(caller.token)).send(Buffer.from('{"Text":"x"}')).expect(422);
      expect(empty.body.message).toBe('Empty Content-Type');
      const unsupported = await t.http.post(t.api('/markdown')).set(withToken(caller.token)).set('Content-Type', 'text/plain').send('# x').expect(422);
      expect(unsupported.body.message).toBe('Unsupported Content-Type');
    });
  });

  describe('/markdown/raw body', () => {
    it.each(['text/plain', 'application/json', 'application/octet-stream'])('takes the raw body whatever the content type (%s)', async (type) => {
      const response = await raw('**bold**', type).expect(200);
      expect(response.text).toBe('<p><strong>bold</strong></p>');
    });

    it('takes a body without a content type', async () => {
      const response = await t.http.post(t.api('/markdown/raw')).set(withToken(caller.token)).send(Buffer.from('*em*')).expect(200);
      expect(response.text).toBe('<p><em>em</em></p>');
    });

    it('answers 200 with an empty body for an empty document', async () => {
      const response = await raw('').expect(200);
      expect(response.text).toBe('');
      expect(response.headers['content-type']).toBe(HTML);
    });

    it('does not parse a JSON body: it is the document', async () => {
      const response = await raw('{"Text": "# not a title"}', 'application/json').expect(200);
      expect(response.text).toBe('<p>{"Text": "# not a title"}</p>');
    });
  });

  describe('auth', () => {
    it.each(['/markdown', '/markdown/raw'])('%s refuses an anonymous caller with 401', async (path) => {
      const response = await t.http.post(t.api(path)).set('Content-Type', 'application/json').send('{"Text":"x"}').expect(401);
      expect(response.body).toEqual({ message: 'token is required', url: `${ROOT}api/swagger` });
    });

    it('checks sign-in before the body', async () => {
      await t.http.post(t.api('/markdown')).set('Content-Type', 'application/json').send('{').expect(401);
    });

    it.each([['read:misc'], ['public-only']])('accepts a token with any scopes (%s)', async (scope) => {
      const limited = await makeUser(t, { scopes: [scope] });
      expect(await html({ Text: '*x*' }, limited.token)).toBe('<p><em>x</em></p>');
      const response = await t.http.post(t.api('/markdown/raw')).set(withToken(limited.token)).set('Content-Type', 'text/plain').send('*x*').expect(200);
      expect(response.text).toBe('<p><em>x</em></p>');
    });
  });

  describe('sanitising', () => {
    it('the checker recognises dangerous markup', () => {
      expect(findDanger('<p>safe <a href="https://example.com" rel="nofollow">x</a> &lt;script&gt;</p>')).toEqual([]);
      expect(findDanger('<script>x</script>')).not.toEqual([]);
      expect(findDanger('<img src=x onerror=alert(1)>')).not.toEqual([]);
      expect(findDanger('<a href="java&#x09;script:alert(1)">x</a>')).not.toEqual([]);
      expect(findDanger("<a href='data:text/html,x'>x</a>")).not.toEqual([]);
      expect(findDanger('<div style="color:red">x</div>')).not.toEqual([]);
      expect(findDanger('<iframe src="https://example.com"></iframe>')).not.toEqual([]);
      expect(XSS_VECTORS.length).toBeGreaterThanOrEqual(50);
    });

    const requests: [string, (vector: string) => Promise<string>][] = [
      ['/markdown markdown', (vector) => html({ Text: vector, Mode: 'markdown' })],
      ['/markdown gfm + wiki', (vector) => html({ Text: vector, Mode: 'gfm', Context: 'owner/repo', Wiki: true })],
      ['/markdown comment + wiki', (vector) => html({ Text: vector, Mode: 'comment', Context: 'javascript:alert(1)', Wiki: true })],
      ['/markdown/raw', async (vector) => (await raw(vector).expect(200)).text],
    ];

    it.each(requests)('no XSS vector survives %s', async (_name, render) => {
      const survivors: string[] = [];
      for (const vector of XSS_VECTORS) {
        const out = await render(vector);
        const danger = findDanger(out);
        if (danger.length > 0) survivors.push(`${JSON.stringify(vector)} → ${out} (${danger.join(', ')})`);
      }
      expect(survivors).toEqual([]);
    });

    it('drops event handlers and styles but keeps the element and its text', async () => {
      expect(await html({ Text: '<div style="color:red" onclick="alert(1)">kept</div>' })).toBe('<div>kept</div>');
    });

    it('gives external links rel="nofollow", and drops a rel the author wrote', async () => {
      const out = await html({ Text: '<a href="https://example.com" rel="opener">x</a> <a href="http://anvil.test/o/r" rel="opener">y</a>' });
      expect(out).toBe('<p><a href="https://example.com" rel="nofollow">x</a> <a href="http://anvil.test/o/r">y</a></p>');
    });
  });

  it('documents both routes in OpenAPI: MarkdownOption in, HTML out', async () => {
    const document = (await t.http.get('/swagger.v1.json').expect(200)).body;
    const render = document.paths['/markdown'].post;
    expect(render.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/MarkdownOption' });
    expect(Object.keys(document.components.schemas.MarkdownOption.properties)).toEqual(['Text', 'Mode', 'Context', 'Wiki']);
    expect(Object.keys(render.responses['200'].content)).toEqual(['text/html']);
    expect(Object.keys(render.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '413', '422', '500']));
    const renderRaw = document.paths['/markdown/raw'].post;
    expect(Object.keys(renderRaw.requestBody.content)).toEqual(['text/plain']);
    expect(Object.keys(renderRaw.responses)).toEqual(expect.arrayContaining(['200', '401', '413', '500']));
  });

  describe('renderer failure', () => {
    const unrenderable = '<div>'.repeat(20_000);

    it('is a 500 with the standard body, its cause shown to site admins only', async () => {
      const response = await markdown({ Text: unrenderable }).expect(500);
      expect(response.body).toEqual({ message: '', url: `${ROOT}api/swagger` });
      const forAdmin = await markdown({ Text: unrenderable }, admin.token).expect(500);
      expect(forAdmin.body.message).toMatch(/^markdown rendering failed: /);
    });

    it('leaves the renderer working for the next document', async () => {
      await raw(unrenderable).expect(500);
      expect(await html({ Text: '*fine*' })).toBe('<p><em>fine</em></p>');
    });
  });

  describe('rendering off the main thread', () => {
    it('a render that runs into its time budget does not stall unrelated requests', async () => {
      // This document would take minutes of CPU, so it always runs until the renderer's time budget stops it,
      // however fast or busy the machine is. Only the order of events is asserted: had rendering run on the main
      // thread, the /version answers would queue behind it.
      const events: string[] = [];
      const rendering = markdown({ Text: UNFINISHABLE_MARKDOWN, Mode: 'markdown' }).then((response) => {
        events.push('render');
        return response;
      });
      for (let i = 0; i < 20; i++) {
        await t.http.get(t.api('/version')).expect(200);
        events.push('version');
      }
      const response = await rendering;
      expect(events).toEqual([...Array(20).fill('version'), 'render']);
      expect(response.status).toBe(500);
      expect(response.body).toEqual({ message: '', url: `${ROOT}api/swagger` });
    });

    it('renders a sizeable document with headings, links and mentions', async () => {
      const section = (i: number) =>
        `## Part ${i}\n\nSome *text* and **bold** with [a link](docs/${i}.md) and @${alice.name}.\n\n- [x] item ${i}\n- [ ] other\n\n`;
      // About 4 KB: the render budget is wall-clock time (5 s plus 60 µs a byte), and a 20 KB document took
      // 9.5 s on a 2-core machine at load 18, past its 6.2 s budget; 4 KB needs a fifth of the work for 5.2 s.
      let text = '';
      let parts = 0;
      for (; text.length < 4_000; parts++) text += section(parts);
      const out = await html({ Text: text, Mode: 'gfm', Context: 'o/r' });
      expect(out).toContain('<h2 id="user-content-part-0">Part 0</h2>');
      expect(out).toContain(`<h2 id="user-content-part-${parts - 1}">Part ${parts - 1}</h2>`);
      expect(out).toContain(`<a href="${ROOT}o/r/docs/0.md">a link</a>`);
      expect(out).toContain(`class="mention">@${alice.name}</a>`);
    });
  });
});
