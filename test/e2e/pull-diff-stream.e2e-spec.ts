import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { GitClient, withCredentials } from '../support/git-client';
import { startTestApp, TestApp } from '../support/test-app';

/** Lines of the big file: 600 000 lines of 70 bytes, some 40 MiB, and more again as `+` lines of a diff. */
const LINES = 600_000;
const line = (index: number) => `line ${String(index).padStart(10, '0')} ${'x'.repeat(53)}\n`;

/**
 * …/pulls/{index}.diff and .patch are streamed from git (docs/pull-requests.md): a diff past the 16 MiB that a
 * collected git command keeps comes whole, with the same headers, and a client that goes away stops git.
 */
describe('pull request .diff and .patch beyond 16 MiB', () => {
  let t: TestApp;
  let base: string;
  let client: GitClient;
  let owner: TestUser;
  let fullName: string;

  beforeAll(async () => {
    t = await startTestApp();
    base = await t.listen();
    client = new GitClient();
    owner = await makeUser(t);
    const repo = await makeRepo(t, owner);
    fullName = repo.full_name;
    const work = await client.workingCopy('main', { 'README.md': 'hello\n' });
    const remote = withCredentials(base, `${fullName}.git`, owner.name, owner.password);
    await client.ok(['push', '--quiet', remote, 'main:main'], { cwd: work });
    await client.ok(['checkout', '--quiet', '-b', 'big'], { cwd: work });
    const file = fs.openSync(path.join(work, 'big.txt'), 'w');
    for (let start = 0; start < LINES; start += 10_000) {
      let chunk = '';
      for (let index = start; index < start + 10_000; index++) chunk += line(index);
      fs.writeSync(file, chunk);
    }
    fs.closeSync(file);
    await client.ok(['add', 'big.txt'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', 'a big file'], { cwd: work });
    await client.ok(['push', '--quiet', remote, 'big:big'], { cwd: work });
    await t.http
      .post(t.api(`/repos/${fullName}/pulls`))
      .set(withToken(owner.token))
      .send({ head: 'big', base: 'main', title: 'Big' })
      .expect(201);
  });
  afterAll(async () => {
    client?.dispose();
    await t?.close();
  });

  /** GET over a real socket, the body counted and its head and tail kept (no 40 MiB string in the test). */
  function download(url: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: number; head: string; tail: string }> {
    return new Promise((resolve, reject) => {
      http
        .get(new URL(url, base), (response) => {
          let bytes = 0;
          let head = '';
          let tail = Buffer.alloc(0);
          response.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            if (head.length < 4096) head += chunk.toString('utf8');
            tail = Buffer.concat([tail, chunk]).subarray(-4096);
          });
          response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, bytes, head, tail: tail.toString('utf8') }));
          response.on('error', reject);
        })
        .on('error', reject);
    });
  }

  it('.diff answers the whole diff, past 40 MiB, as text/plain', async () => {
    const answer = await download(t.api(`/repos/${fullName}/pulls/1.diff`));
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(answer.bytes).toBeGreaterThan(LINES * 71);
    expect(answer.head).toContain('diff --git a/big.txt b/big.txt');
    expect(answer.tail.endsWith(`+${line(LINES - 1)}`)).toBe(true);
  });

  it('.patch answers the whole mailbox, past 40 MiB', async () => {
    const answer = await download(t.api(`/repos/${fullName}/pulls/1.patch`));
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(answer.bytes).toBeGreaterThan(LINES * 71);
    expect(answer.head).toContain('Subject: [PATCH] a big file');
    expect(answer.tail).toContain(`+${line(LINES - 1)}`);
  });

  it('an unknown pull request is still 404, and a client that goes away stops git', async () => {
    await t.http.get(t.api(`/repos/${fullName}/pulls/99.diff`)).expect(404);
    const gits = () =>
      fs
        .readdirSync('/proc')
        .filter((entry) => /^\d+$/.test(entry))
        .filter((pid) => {
          try {
            const command = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
            return command.includes('diff') && command.includes('--full-index') && command.some((arg) => arg.includes(fullName.split('/')[1]));
          } catch {
            return false;
          }
        });
    const started = await new Promise<string[]>((resolve, reject) => {
      const request = http.get(new URL(t.api(`/repos/${fullName}/pulls/1.diff`), base), (response) => {
        response.once('data', () => {
          // git is running, blocked on a client that stopped reading: see it, then go away.
          const running = gits();
          request.destroy();
          resolve(running);
        });
      });
      request.on('error', () => undefined);
      setTimeout(() => reject(new Error('no answer')), 30_000).unref();
    });
    expect(started.length).toBeGreaterThan(0);
    for (let attempt = 0; attempt < 400 && gits().length > 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(gits()).toEqual([]);
  });
});
