import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { createMysqlDatabase, usesMysql } from '../support/test-app';
import { Answer, call, makeAdmin, ServerProcess, startServer } from './support/server-process';

const execFileAsync = promisify(execFile);
const OPEN_FILES = 64;
/** Clones and downloads at once: more than the descriptors left for connections and git at `ulimit -n 64`. */
const BURST = 48;

/**
 * The real server started under `ulimit -n 64`: it says at start that it lowered its limits to fit, and a burst of
 * clones and downloads gets answers (200, or 503 with Retry-After), never a reset or a 500, and never ends the
 * process; once the burst is over, a clone works again without a restart.
 */
describe(`the server under ulimit -n ${OPEN_FILES}`, () => {
  let dataDir: string;
  let database: { url: string; drop(): Promise<void> } | undefined;
  let server: ServerProcess;
  let admin: { name: string; token: string };
  const repo = 'burst';

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-fault-fds-'));
    database = usesMysql() ? await createMysqlDatabase() : undefined;
    // A waiting request gives up after a bounded time, so that the burst ends in answers: the content API's git work
    // after GIT_QUEUE_TIMEOUT, a clone (which waits while its client stays connected) after GIT_EXCHANGE_TIMEOUT.
    const env = { DATA_DIR: dataDir, ...(database ? { DATABASE_URL: database.url } : {}), GIT_QUEUE_TIMEOUT: '2', GIT_EXCHANGE_TIMEOUT: '20' };
    admin = await makeAdmin(env);
    server = await startServer(env, { openFiles: OPEN_FILES });
    const created = await call(server.url, 'POST', '/api/v1/user/repos', { token: admin.token, body: { name: repo, auto_init: true } });
    expect(created.status).toBe(201);
  });
  afterAll(async () => {
    await server?.stop();
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('says at start that it lowered GIT_MAX_PROCESSES and HTTP_MAX_CONNECTIONS to fit', () => {
    expect(server.output()).toContain(`the process may open only ${OPEN_FILES} files (ulimit -n)`);
    expect(server.output()).toMatch(/HTTP_MAX_CONNECTIONS lowered from 4096 to \d+ to fit/);
  });

  it('answers every request of a burst of clones and downloads (200 or 503), resets none, and stays up', async () => {
    const requests: Promise<Answer>[] = [];
    for (let index = 0; index < BURST; index++) {
      const kind = index % 3;
      const target =
        kind === 0
          ? `/${admin.name}/${repo}.git/info/refs?service=git-upload-pack`
          : kind === 1
            ? `/api/v1/repos/${admin.name}/${repo}/archive/main.tar.gz`
            : `/api/v1/repos/${admin.name}/${repo}/raw/README.md`;
      requests.push(call(server.url, 'GET', target, { token: admin.token, timeoutMs: 60_000 }));
    }
    const outcomes = await Promise.allSettled(requests);
    const failures = outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => String((outcome as PromiseRejectedResult).reason));
    const statuses = outcomes.filter((outcome) => outcome.status === 'fulfilled').map((outcome) => (outcome as PromiseFulfilledResult<Answer>).value);
    expect(failures).toEqual([]);
    const unexpected = statuses.filter((answer) => answer.status !== 200 && answer.status !== 503).map((answer) => `${answer.status} ${answer.body}`);
    expect(unexpected).toEqual([]);
    for (const answer of statuses) if (answer.status === 503) expect(answer.headers['retry-after']).toMatch(/^\d+$/);
    expect(statuses.filter((answer) => answer.status === 200).length).toBeGreaterThan(0);
    expect(server.hasExited()).toBe(false);
    expect(server.output()).not.toContain('ReferenceError');
  });

  it('clones again once the burst is over, without a restart', async () => {
    const target = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-fault-clone-'));
    try {
      const url = new URL(server.url);
      url.username = admin.name;
      url.password = admin.token;
      url.pathname = `/${admin.name}/${repo}.git`;
      // The burst is over for the server once the gits it started have ended: on a busy machine the last of them
      // may still hold their slots for a while, and the clone is answered 503 meanwhile, as a client retries it.
      for (let attempt = 1; ; attempt++) {
        fs.rmSync(path.join(target, 'clone'), { recursive: true, force: true });
        const outcome = await execFileAsync('git', ['clone', '--quiet', url.toString(), path.join(target, 'clone')], {
          env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
        }).then(
          () => null,
          (error: Error) => error,
        );
        if (outcome === null) break;
        if (attempt >= 60 || !/ 503\b/.test(outcome.message)) throw outcome;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(fs.readFileSync(path.join(target, 'clone', 'README.md'), 'utf8')).toContain(repo);
    } finally {
      fs.rmSync(target, { recursive: true, force: true });
    }
    expect(server.hasExited()).toBe(false);
  });
});
