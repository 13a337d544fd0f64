import type { AddressInfo } from 'node:net';
import { giteaApi } from 'gitea-js';
import { startTestApp, TestApp } from './test-app';

/** The real application listening on a loopback port, and a gitea-js client for a token. */
export async function listeningApp(): Promise<{ t: TestApp; base: string; sdk: (token?: string) => ReturnType<typeof giteaApi> }> {
  const t = await startTestApp();
  await t.app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
  return { t, base, sdk: (token?: string) => giteaApi(base, { ...(token ? { token } : {}), customFetch: fetch }) };
}
