import { makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

describe('markdown size limit (MARKDOWN_MAX_SIZE=1KiB)', () => {
  let t: TestApp;
  let caller: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ MARKDOWN_MAX_SIZE: '1KiB' });
    caller = await makeUser(t);
  });
  afterAll(() => t.close());

  const markdown = (text: string) => t.http.post(t.api('/markdown')).set(withToken(caller.token)).send({ Text: text, Mode: 'gfm' });
  const raw = (text: string) => t.http.post(t.api('/markdown/raw')).set(withToken(caller.token)).set('Content-Type', 'text/plain').send(text);
  const tooLarge = { message: 'markdown document is too large: 1025 bytes, the limit is 1024 bytes', url: 'http://anvil.test/api/swagger' };

  it('/markdown renders a document of exactly the limit', async () => {
    const response = await markdown('a'.repeat(1024)).expect(200);
    expect(response.text).toBe(`<p>${'a'.repeat(1024)}</p>`);
  });

  it('/markdown refuses a larger document with 413 and the standard body', async () => {
    const response = await markdown('a'.repeat(1025)).expect(413);
    expect(response.body).toEqual(tooLarge);
  });

  it('counts bytes, not characters', async () => {
    // 512 two-byte characters are 1024 bytes; one more ASCII byte is over the limit.
    await markdown('é'.repeat(512)).expect(200);
    const response = await markdown(`${'é'.repeat(512)}a`).expect(413);
    expect(response.body).toEqual(tooLarge);
  });

  it('/markdown/raw applies the same limit to the raw body', async () => {
    await raw('b'.repeat(1024)).expect(200);
    const response = await raw('b'.repeat(1025)).expect(413);
    expect(response.body).toEqual(tooLarge);
  });

  it('checks sign-in before the size', async () => {
    await t.http.post(t.api('/markdown/raw')).set('Content-Type', 'text/plain').send('b'.repeat(2000)).expect(401);
  });
});
