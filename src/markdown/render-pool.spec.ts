import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { workerFile } from './markdown-renderer';
import { RenderFailure, RenderPool, RenderPoolOptions } from './render-pool';

/**
 * A stand-in worker: echoes the text, or misbehaves on request ("hang" loops forever, "crash" exits,
 * "fail" answers an error), so the pool's recovery can be watched without a slow document.
 */
const STAND_IN = `
import { readlinkSync } from 'node:fs';
import { parentPort, threadId } from 'node:worker_threads';
parentPort.on('message', ({ id, text }) => {
  if (text === 'hang') for (;;);
  if (text === 'crash') process.exit(1);
  if (text === 'fail') return parentPort.postMessage({ id, error: 'boom' });
  if (text.startsWith('wait ')) return setTimeout(() => parentPort.postMessage({ id, html: text + ' on ' + threadId }), Number(text.slice(5)));
  parentPort.postMessage({ id, html: text + ' on ' + threadId });
});
parentPort.postMessage({ ready: true, threadId: Number(readlinkSync('/proc/thread-self').split('/').pop()) });
`;

/** The same stand-in, but it reports no thread id: the pool then budgets jobs in wall-clock time. */
const WALL_CLOCK_STAND_IN = STAND_IN.replace(/parentPort\.postMessage\(\{ ready: true, [^\n]*/, 'parentPort.postMessage({ ready: true });');

describe('RenderPool', () => {
  let directory: string;
  let standIn: string;
  const pools: RenderPool[] = [];

  beforeAll(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-render-pool-'));
    standIn = path.join(directory, 'stand-in.worker.mjs');
    fs.writeFileSync(standIn, STAND_IN);
  });
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.close()));
  });
  afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

  const pool = (options: Partial<RenderPoolOptions> = {}) => {
    // Generous defaults: a loaded machine must never turn a passing job into a timeout. Tests about time
    // limits use jobs that never finish ("hang"), so only the ordering of events decides their outcome.
    const created = new RenderPool({ workerFile: standIn, size: 1, timeoutMs: 60_000, queueTimeoutMs: 60_000, maxQueued: 10, ...options });
    pools.push(created);
    return created;
  };

  it('answers each job with its own result', async () => {
    const subject = pool({ size: 2 });
    const results = await Promise.all(['a', 'b', 'c', 'd'].map((text) => subject.render(text, {})));
    expect(results.map((html) => html.split(' ')[0])).toEqual(['a', 'b', 'c', 'd']);
  });

  it('never starts more workers than its size', async () => {
    const subject = pool({ size: 2 });
    const results = await Promise.all(Array.from({ length: 6 }, () => subject.render('wait 20', {})));
    expect(new Set(results).size).toBeLessThanOrEqual(2);
  });

  it('fails a job that runs too long, and carries on with a fresh worker', async () => {
    const subject = pool({ timeoutMs: 200 });
    await expect(subject.render('hang', {})).rejects.toThrow(new RenderFailure('markdown rendering took longer than 200 ms'));
    await expect(subject.render('after', {}, 60_000)).resolves.toMatch(/^after on /);
  });

  it('takes a time limit per job', async () => {
    const subject = pool();
    await expect(subject.render('hang', {}, 150)).rejects.toThrow('markdown rendering took longer than 150 ms');
    await expect(subject.render('wait 200', {})).resolves.toMatch(/^wait 200/);
  });

  it("budgets a job in its worker's CPU time: waiting costs nothing, spinning does", async () => {
    const subject = pool({ timeoutMs: 100 });
    // Idle in the worker for three times the budget: no CPU used, so the job is not failed, however long the
    // wait stretches on a loaded machine.
    await expect(subject.render('wait 300', {})).resolves.toMatch(/^wait 300/);
    await expect(subject.render('hang', {})).rejects.toThrow('markdown rendering took longer than 100 ms');
  });

  it('budgets in wall-clock time when the worker reports no thread', async () => {
    const wallClock = path.join(directory, 'wall-clock.worker.mjs');
    fs.writeFileSync(wallClock, WALL_CLOCK_STAND_IN);
    const subject = pool({ workerFile: wallClock, timeoutMs: 100 });
    await subject.render('warm', {});
    // The job would answer after 60 s; only the wall-clock budget can end it.
    await expect(subject.render('wait 60000', {})).rejects.toThrow('markdown rendering took longer than 100 ms');
  });

  it('fails the job of a worker that dies, and carries on', async () => {
    const subject = pool();
    await expect(subject.render('crash', {})).rejects.toBeInstanceOf(RenderFailure);
    await expect(subject.render('after', {})).resolves.toMatch(/^after on /);
  });

  it('fails the waiting jobs when a worker cannot start, and tries again on the next job', async () => {
    const broken = path.join(directory, 'broken.worker.mjs');
    fs.writeFileSync(broken, 'throw new Error("cannot load");');
    const subject = pool({ workerFile: broken });
    const outcomes = await Promise.allSettled([subject.render('a', {}), subject.render('b', {})]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect((outcomes[0] as PromiseRejectedResult).reason.message).toMatch(/could not start: .*cannot load/);
    fs.writeFileSync(broken, STAND_IN);
    await expect(subject.render('c', {})).resolves.toMatch(/^c on /);
  });

  it('passes on an error the worker reports', async () => {
    await expect(pool().render('fail', {})).rejects.toThrow('markdown rendering failed: boom');
  });

  it('refuses jobs beyond its queue', async () => {
    const subject = pool({ maxQueued: 1 });
    await subject.render('warm', {});
    const running = subject.render('wait 300', {});
    const queued = subject.render('queued', {});
    await expect(subject.render('refused', {})).rejects.toThrow('the markdown renderer is busy');
    await expect(running).resolves.toMatch(/^wait 300/);
    await expect(queued).resolves.toMatch(/^queued/);
  });

  it('fails a job that waits too long for a worker', async () => {
    const subject = pool({ queueTimeoutMs: 100 });
    // Warm first: a cold worker's start-up would count against the running job's own queue time.
    await subject.render('warm', {});
    // The only worker never frees up, so the late job can only end by its queue timer.
    const running = expect(subject.render('hang', {})).rejects.toThrow('the markdown renderer is shut down');
    await expect(subject.render('late', {})).rejects.toThrow('the markdown renderer is busy');
    await subject.close();
    await running;
  });

  it("does not count a worker's start-up against a waiting job", async () => {
    const slowStart = path.join(directory, 'slow-start.worker.mjs');
    const slowed = WALL_CLOCK_STAND_IN.replace('parentPort.postMessage({ ready: true });', 'setTimeout(() => parentPort.postMessage({ ready: true }), 300);');
    expect(slowed).toContain('setTimeout(() => parentPort.postMessage({ ready: true }), 300)');
    fs.writeFileSync(slowStart, slowed);
    const subject = pool({ workerFile: slowStart, queueTimeoutMs: 20 });
    await expect(subject.render('first', {})).resolves.toMatch(/^first on /);
  });

  it('fails waiting and running jobs when closed, and refuses new ones', async () => {
    const subject = pool();
    const outcomes = Promise.allSettled([subject.render('hang', {}), subject.render('x', {})]);
    await subject.close();
    const [running, waiting] = await outcomes;
    expect(running).toEqual({ status: 'rejected', reason: new RenderFailure('the markdown renderer is shut down') });
    expect(waiting).toEqual({ status: 'rejected', reason: new RenderFailure('the markdown renderer is shut down') });
    await expect(subject.render('x', {})).rejects.toThrow('shut down');
  });

  it('runs the real Markdown worker', async () => {
    const subject = pool({ workerFile: workerFile() });
    const options = { special: false, comment: false, wiki: false, base: 'http://anvil.test/', rootUrl: 'http://anvil.test/', mentions: [], issueRefs: 'none' };
    await expect(subject.render('# Hi <script>x</script>', options)).resolves.toBe('<h1 id="user-content-hi">Hi </h1>');
  });
});

describe('workerFile', () => {
  it('finds the worker beside the module, or in src/ from a build directory without a copy', () => {
    expect(workerFile(__dirname)).toBe(path.join(__dirname, 'render.worker.mjs'));
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-worker-file-'));
    try {
      const built = path.join(project, 'dist', 'src', 'markdown');
      const source = path.join(project, 'src', 'markdown');
      fs.mkdirSync(built, { recursive: true });
      fs.mkdirSync(source, { recursive: true });
      fs.writeFileSync(path.join(source, 'render.worker.mjs'), '');
      expect(workerFile(built)).toBe(path.join(source, 'render.worker.mjs'));
      fs.writeFileSync(path.join(built, 'render.worker.mjs'), '');
      expect(workerFile(built)).toBe(path.join(built, 'render.worker.mjs'));
    } finally {
      fs.rmSync(project, { recursive: true, force: true });
    }
  });

  it('names the places it looked when the worker is missing', () => {
    expect(() => workerFile('/nonexistent/a/b/c')).toThrow(/markdown worker not found/);
  });
});
