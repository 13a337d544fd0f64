import type { AddressInfo } from 'node:net';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { makeUser, TestUser } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Swagger UI's "Try it out" must work from whatever host the page is opened from, not only from
 * ROOT_URL's. ROOT_URL here names a host the browser cannot even resolve; the page is opened from 127.0.0.1 and
 * from localhost, authorised with a token, and GET /user must answer 200. Every request the page makes must go
 * to the server itself: Swagger UI comes from node_modules (swagger-ui-dist), never from a CDN.
 */
describe('Swagger UI in headless Chromium', () => {
  let t: TestApp;
  let alice: TestUser;
  let browser: Browser;
  let port: number;

  beforeAll(async () => {
    t = await startTestApp({ ROOT_URL: 'http://anvil.invalid/' });
    alice = await makeUser(t);
    // No host: Node listens on both IPv4 and IPv6, so `localhost` works whichever address it resolves to.
    await t.app.listen(0);
    port = (t.app.getHttpServer().address() as AddressInfo).port;
    browser = await puppeteer.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      headless: true,
      // CI runs as root, where Chromium's sandbox cannot start.
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it.each(['127.0.0.1', 'localhost'])('from http://%s: authorise with a token, execute GET /user, see 200', async (host) => {
    const origin = `http://${host}:${port}`;
    const page = await browser.newPage();
    const foreign: string[] = [];
    await page.setRequestInterception(true);
    page.on('request', (request) => {
      if (request.url().startsWith(`${origin}/`) || request.url().startsWith('data:')) void request.continue();
      else {
        foreign.push(request.url());
        void request.abort();
      }
    });
    try {
      await page.goto(`${origin}/api/swagger`, { waitUntil: 'networkidle0' });
      await authorise(page, `token ${alice.token}`);
      const answer = await tryGetCurrentUser(page, origin);
      expect(answer.status).toBe(200);
      expect(answer.authorization).toBe(`token ${alice.token}`);
      expect(JSON.parse(answer.body).login).toBe(alice.name);
      // What the page itself shows in its response table.
      await page.waitForFunction("document.querySelector('.live-responses-table .response .response-col_status')?.textContent?.trim() === '200'");
      expect(foreign).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

async function authorise(page: Page, value: string): Promise<void> {
  await page.waitForSelector('.auth-wrapper .authorize');
  await page.click('.auth-wrapper .authorize');
  await page.waitForSelector('.modal-ux .auth-container');
  // The dialog lists one form per security scheme; fill the token header's.
  let done = false;
  for (const container of await page.$$('.modal-ux .auth-container')) {
    if (!(await container.evaluate((node) => node.textContent ?? '')).includes('AuthorizationHeaderToken')) continue;
    await (await container.$('input'))!.type(value);
    await (await container.$('button.authorize'))!.click();
    done = true;
    break;
  }
  if (!done) throw new Error('the Authorize dialog has no AuthorizationHeaderToken form');
  await page.click('.modal-ux .btn-done, .modal-ux button.close-modal');
}

async function tryGetCurrentUser(page: Page, origin: string): Promise<{ status: number; authorization?: string; body: string }> {
  const block = '.opblock-get:has(.opblock-summary-path[data-path="/user"])';
  await page.waitForSelector(block);
  await page.click(`${block} .opblock-summary`);
  await page.waitForSelector(`${block} .try-out__btn`);
  await page.click(`${block} .try-out__btn`);
  await page.waitForSelector(`${block} .execute`);
  const response = page.waitForResponse((candidate) => candidate.url() === `${origin}/api/v1/user` && candidate.request().method() === 'GET');
  await page.click(`${block} .execute`);
  const answer = await response;
  return { status: answer.status(), authorization: answer.request().headers().authorization, body: await answer.text() };
}
