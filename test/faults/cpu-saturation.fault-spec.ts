import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createMysqlDatabase, usesMysql } from '../support/test-app';
import { adminToken, baseEnv, buildOnce, deliveryChild, startServer } from './support/built-server';

/** Each busy loop ends by itself after this long at the latest (and is killed when the test ends). */
const BUSY_LOOP_CEILING_MS = 300_000;
const HOOKS = 8;
const ISSUES = 16;
/** Writes in flight at once. */
const CONCURRENCY = 3;

/** A process's nice value (field 19 of /proc/<pid>/stat) and its autogroup's, when the kernel has autogroups. */
function niceOf(pid: number): { nice: number; autogroup?: number } {
  const nice = Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[16]);
  const autogroup = fs.existsSync(`/proc/${pid}/autogroup`) ? Number(/nice (-?\d+)/.exec(fs.readFileSync(`/proc/${pid}/autogroup`, 'utf8'))?.[1]) : undefined;
  return { nice, autogroup };
}

/**
 * Priority inversion: the webhook delivery process runs at the lowest priority, and its bookkeeping (claims,
 * leases, outcomes) writes to the same database as the server. On a machine whose every core is busy, a process
 * starved while it held SQLite's one write lock would make the server's writes wait past `busy_timeout` and answer
 * 503 ("database is locked"). With busy loops on every core (twice over, each in a session of its own, as other
 * programs of the machine would be) while deliveries run, every write of the server is answered, and every delivery
 * is made in the end (outcomes, not durations); on SQLite the process's bookkeeping is found at normal priority meanwhile
 * (only its sending thread yields), since how long a starved holder waits is the scheduler's to decide.
 */
describe(`server writes beside webhook deliveries on a saturated CPU (${usesMysql() ? 'MariaDB' : 'SQLite'})`, () => {
  it('answers every write while busy loops hold every core, and makes every delivery', async () => {
    buildOnce();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-cpu-'));
    const database = usesMysql() ? await createMysqlDatabase() : undefined;
    const env = { ...baseEnv(dataDir, database?.url), WEBHOOK_ALLOWED_HOSTS: 'loopback', ALLOW_LOCAL_NETWORKS: 'true', WEBHOOK_SENDER_NICE: '19' };
    const token = await adminToken(env, 'cpu-admin');
    // The receiver answers at once; deliveries by their id (a retry repeats one).
    const delivered = new Set<string>();
    const receiver = http.createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        delivered.add(String(request.headers['x-gitea-delivery']));
        response.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const server = await startServer(env);
    const busy: ChildProcess[] = [];
    try {
      const api = async (method: string, route: string, body?: unknown) => {
        const response = await fetch(`${server.url}/api/v1${route}`, {
          method,
          headers: { Authorization: `token ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
        return { status: response.status, text: await response.text() };
      };
      expect((await api('POST', '/user/repos', { name: 'busy' })).status).toBe(201);
      for (let index = 0; index < HOOKS; index++) {
        const hook = await api('POST', '/repos/cpu-admin/busy/hooks', {
          type: 'gitea',
          active: true,
          events: ['issues', 'issue_comment'],
          config: { url: `${hookUrl}/${index}`, content_type: 'json' },
        });
        expect(hook.status).toBe(201);
      }
      // Warm: the delivery process started and sending before the CPU fills.
      expect((await api('POST', '/repos/cpu-admin/busy/issues', { title: 'warm' })).status).toBe(201);
      await until('the first deliveries', () => delivered.size >= HOOKS);

      // Twice as many busy loops as cores, at the server's own priority, each bounded in time.
      for (let index = 0; index < 2 * os.cpus().length; index++) {
        busy.push(
          spawn(process.execPath, ['-e', `const end = Date.now() + ${BUSY_LOOP_CEILING_MS}; while (Date.now() < end) {}`], { stdio: 'ignore', detached: true }),
        );
      }
      const deliverer = deliveryChild(server.child.pid!);
      expect(deliverer).toBeGreaterThan(0);
      // The thread that takes the write lock: normal priority where that lock is the whole database's (SQLite).
      const lowest = usesMysql() ? 19 : 0;
      const priority = niceOf(deliverer);
      expect(priority.nice).toBe(lowest);
      if (priority.autogroup !== undefined) expect(priority.autogroup).toBe(lowest);
      // Issues and comments, a few at a time: each write queues a delivery for every hook.
      const answers: { status: number; text: string }[] = [];
      let next = 0;
      const writer = async () => {
        while (next < ISSUES) {
          const number = ++next;
          const issue = await api('POST', '/repos/cpu-admin/busy/issues', { title: `issue ${number}`, body: 'under load' });
          answers.push(issue);
          if (issue.status === 201) answers.push(await api('POST', `/repos/cpu-admin/busy/issues/${JSON.parse(issue.text).number}/comments`, { body: 'said' }));
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, writer));
      // The CPU was full the whole time.
      expect(busy.every((child) => child.exitCode === null)).toBe(true);
      for (const child of busy) child.kill('SIGKILL');
      // Every delivery made (at the lowest priority on MariaDB, they wait for the CPU the loops held).
      await until('every delivery', () => delivered.size >= HOOKS * (1 + 2 * ISSUES));

      expect(answers.filter((answer) => answer.status !== 201)).toEqual([]);
      expect(answers).toHaveLength(2 * ISSUES);
      expect(server.output()).not.toContain('database is locked');
      expect(delivered.size).toBe(HOOKS * (1 + 2 * ISSUES));
    } finally {
      for (const child of busy) child.kill('SIGKILL');
      await server.stop();
      receiver.close();
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/** Waits (a ceiling, not a speed requirement) until `condition` holds. */
async function until(what: string, condition: () => boolean): Promise<void> {
  for (let round = 0; !condition(); round++) {
    if (round > 4000) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
