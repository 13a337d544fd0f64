import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { processRunning } from '../support/processes';
import { createMysqlDatabase, usesMysql } from '../support/test-app';
import { adminToken, baseEnv, buildOnce, deliveryChild, startServer } from './support/built-server';

async function waitFor<T>(what: string, probe: () => T | undefined | false | 0): Promise<T> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const value = probe();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`never happened: ${what}`);
}

/**
 * The webhook delivery process runs in a session of its own, so a SIGKILL of the server (as an operator's kill -9
 * or the OOM killer sends it) does not reach it: it must see the server gone and end, holding nothing.
 */
describe(`the webhook delivery process when the server is killed (${usesMysql() ? 'MariaDB' : 'SQLite'})`, () => {
  it('ends with the server', async () => {
    buildOnce();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-delivery-process-'));
    const database = usesMysql() ? await createMysqlDatabase() : undefined;
    const env = { ...baseEnv(dataDir, database?.url), WEBHOOK_ALLOWED_HOSTS: 'loopback' };
    const token = await adminToken(env);
    const server = await startServer(env);
    try {
      const api = (route: string, body: unknown) =>
        fetch(`${server.url}/api/v1${route}`, {
          method: 'POST',
          headers: { Authorization: `token ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
      expect((await api('/user/repos', { name: 'hooked' })).status).toBe(201);
      // A receiver that is not there: the delivery is retried, and the process keeps running.
      expect(
        (await api('/repos/faults-admin/hooked/hooks', { type: 'gitea', active: true, config: { url: 'http://127.0.0.1:9/hook', content_type: 'json' } }))
          .status,
      ).toBe(201);
      const child = await waitFor('the delivery process started', () => deliveryChild(server.child.pid!));
      server.child.kill('SIGKILL');
      expect(await server.exited).toEqual({ code: null, signal: 'SIGKILL' });
      await waitFor('the delivery process ended', () => !processRunning(child));
      expect(processRunning(child)).toBe(false);
    } finally {
      await server.stop();
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
