#!/usr/bin/env node
/*
 * Git LFS benchmark against a running Anvil, in three parts:
 *
 *   1. One object of BENCH_LFS_SIZE_MIB (default 1024) uploaded (PUT objects/{oid}/{size}) and downloaded
 *      (GET objects/{oid}), compared with a plain `node:http` server that streams the body to disk and the file
 *      back, in BENCH_LFS_ROUNDS rounds (default 5) that alternate which side goes first; the medians, each
 *      server's CPU time per upload, and its RSS growth during the transfers (peak over the RSS before them).
 *   2. A batch request naming BENCH_LFS_BATCH objects (default 1000): uploads the repository lacks, then
 *      downloads of objects it holds (uploaded first); the median time of BENCH_LFS_BATCH_RUNS requests each.
 *   3. A clone of a repository with BENCH_LFS_FILES LFS files (default 500, 4 KiB each) with the real git-lfs:
 *      `git lfs pull` into a clone made without LFS (GIT_LFS_SKIP_SMUDGE), from Anvil and from a minimal
 *      reference LFS server written below (batch + GET from a directory), both over loopback HTTP; and the whole
 *      `git clone` from Anvil for scale.
 *
 *   BENCH_URL=http://127.0.0.1:3000 BENCH_USER=bench BENCH_TOKEN=<token> BENCH_SERVER_PID=<pid> node bench/lfs.bench.js
 *
 * The token's user gets new repositories `lfs-bench-*`, deleted at the end (which removes their objects).
 * Needs git and git-lfs. Environment:
 *   BENCH_URL, BENCH_USER, BENCH_TOKEN (write:repository), BENCH_SERVER_PID (optional, Linux, for RSS)
 *   BENCH_LFS_SIZE_MIB (1..4096), BENCH_LFS_BATCH (1..1000), BENCH_LFS_BATCH_RUNS (1..50), BENCH_LFS_FILES (1..2000),
 *   BENCH_LFS_PULLS (1..15, default 3: measured pulls from each server, alternating; more on a busy machine)
 *   BENCH_LFS_ROUNDS (1..15, default 5: transfers of the object on each side, alternating)
 *   BENCH_ONLY=transfer,batch,clone   the parts to run (default all)
 * Prints the figures and exits 1 when one misses its target (transfer ≥ 0.8 of the baseline, RSS growth < 32 MiB,
 * batch < 200 ms, `git lfs pull` within 1.2× of the reference), 2 when the run could not be set up.
 */
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { Readable } = require('node:stream');
const { bounded, baseUrl } = require('./support');

const SIZE = bounded('BENCH_LFS_SIZE_MIB', 1024, 4096) * 1024 * 1024;
const BATCH = bounded('BENCH_LFS_BATCH', 1000, 1000);
const BATCH_RUNS = bounded('BENCH_LFS_BATCH_RUNS', 9, 50);
const FILES = bounded('BENCH_LFS_FILES', 500, 2000);
const PULLS = bounded('BENCH_LFS_PULLS', 3, 15);
const ROUNDS = bounded('BENCH_LFS_ROUNDS', 5, 15);
const ONLY = new Set((process.env.BENCH_ONLY || 'transfer,batch,clone').split(','));
const LFS = 'application/vnd.git-lfs+json';
const CHUNK_BYTES = 1024 * 1024;
/** USER_HZ of /proc/PID/stat (100 on Linux). */
const CLOCK_TICKS = 100;

/** `size` bytes of a pattern that starts with `seed`, produced on the fly (the client holds no file either). */
function body(size, seed) {
  const chunk = Buffer.alloc(CHUNK_BYTES, 0x5a);
  chunk.write(seed);
  let left = size;
  return new Readable({
    read() {
      if (left <= 0) return this.push(null);
      const n = Math.min(left, chunk.length);
      left -= n;
      this.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    },
  });
}

async function oidOf(size, seed) {
  const hash = crypto.createHash('sha256');
  for await (const chunk of body(size, seed)) hash.update(chunk);
  return hash.digest('hex');
}

function request(url, options, source) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, options, (response) => {
      let bytes = 0;
      const chunks = [];
      response.on('data', (chunk) => {
        bytes += chunk.length;
        if (chunks.length < 64) chunks.push(chunk);
      });
      response.on('end', () => resolve({ status: response.statusCode, bytes, text: Buffer.concat(chunks).toString('utf8', 0, 1 << 20) }));
      response.on('error', reject);
    });
    req.on('error', reject);
    if (source instanceof Readable) source.pipe(req);
    else req.end(source);
  });
}

async function timed(work) {
  const start = process.hrtime.bigint();
  const result = await work();
  return { result, seconds: Number(process.hrtime.bigint() - start) / 1e9 };
}

function rssOf(pid) {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
  } catch {
    return NaN;
  }
}

/** The process's CPU time so far (all threads, user and system), from /proc. */
function cpuSecondsOf(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

function loadAverage() {
  return os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** A child process running `script` (which prints its port), with `arg`. */
async function startChild(script, arg) {
  const child = spawn(process.execPath, ['-e', script, arg], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    child.stdout.once('data', (data) => resolve(Number(String(data).trim())));
    child.once('exit', () => reject(new Error('a reference server exited')));
  });
  return { url: `http://127.0.0.1:${port}`, pid: child.pid, stop: () => child.kill('SIGTERM') };
}

/** The transfer baseline: PUT streams the body to a file, GET streams it back. */
const PLAIN_SERVER = `
  const fs = require('node:fs'); const http = require('node:http'); const path = require('node:path');
  const { pipeline } = require('node:stream/promises');
  const dir = process.argv[1];
  http.createServer(async (req, res) => {
    const file = path.join(dir, path.basename(req.url));
    try {
      if (req.method === 'PUT') { await pipeline(req, fs.createWriteStream(file)); res.writeHead(200).end(); return; }
      const { size } = await fs.promises.stat(file);
      res.writeHead(200, { 'Content-Length': size });
      await pipeline(fs.createReadStream(file), res);
    } catch { if (!res.headersSent) res.writeHead(500); res.end(); }
  }).listen(0, '127.0.0.1', function () { process.stdout.write(this.address().port + '\\n'); });
`;

/** The minimal reference LFS server: batch (download) and GET of objects kept as DIR/<oid>; no auth. */
const REFERENCE_LFS = `
  const fs = require('node:fs'); const http = require('node:http'); const path = require('node:path');
  const { pipeline } = require('node:stream/promises');
  const dir = process.argv[1];
  const server = http.createServer(async (req, res) => {
    try {
      if (req.method === 'POST' && req.url.endsWith('/objects/batch')) {
        const chunks = []; for await (const chunk of req) chunks.push(chunk);
        const asked = JSON.parse(Buffer.concat(chunks).toString());
        const base = 'http://127.0.0.1:' + server.address().port + '/objects/';
        const objects = asked.objects.map((o) => fs.existsSync(path.join(dir, o.oid))
          ? { oid: o.oid, size: o.size, authenticated: true, actions: { download: { href: base + o.oid } } }
          : { oid: o.oid, size: o.size, error: { code: 404, message: 'Not Found' } });
        res.writeHead(200, { 'Content-Type': 'application/vnd.git-lfs+json' });
        res.end(JSON.stringify({ transfer: 'basic', objects }));
        return;
      }
      const file = path.join(dir, path.basename(req.url));
      const { size } = await fs.promises.stat(file);
      res.writeHead(200, { 'Content-Length': size, 'Content-Type': 'application/octet-stream' });
      await pipeline(fs.createReadStream(file), res);
    } catch { if (!res.headersSent) res.writeHead(404); res.end(); }
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], ...options });
    let stderr = '';
    child.stderr.on('data', (data) => (stderr += data));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')}: exit ${code}: ${stderr.slice(-2000)}`))));
  });
}

async function main() {
  const base = baseUrl();
  const user = process.env.BENCH_USER;
  const token = process.env.BENCH_TOKEN;
  if (!user || !token) {
    console.error('BENCH_USER and BENCH_TOKEN are required');
    process.exit(2);
  }
  const serverPid = process.env.BENCH_SERVER_PID ? Number(process.env.BENCH_SERVER_PID) : 0;
  const basic = { Authorization: `Basic ${Buffer.from(`${user}:${token}`).toString('base64')}` };
  const api = async (method, apiPath, json) => {
    const response = await fetch(`${base}/api/v1${apiPath}`, {
      method,
      headers: { ...basic, 'Content-Type': 'application/json' },
      body: json && JSON.stringify(json),
    });
    if (!response.ok) throw new Error(`${method} ${apiPath}: ${response.status} ${await response.text()}`);
    return method === 'DELETE' ? null : response.json();
  };
  const made = [];
  const newRepo = async (kind) => {
    const repo = await api('POST', '/user/repos', { name: `lfs-bench-${kind}-${Date.now().toString(36)}`, auto_init: kind !== 'clone' });
    made.push(repo.full_name);
    return repo.full_name;
  };
  const lfsUrl = (repo, tail) => `${base}/${repo}.git/info/lfs/${tail}`;
  const batch = (repo, operation, objects) =>
    request(lfsUrl(repo, 'objects/batch'), { method: 'POST', headers: { ...basic, Accept: LFS, 'Content-Type': LFS } }, JSON.stringify({ operation, objects }));
  const put = (repo, oid, size, source) =>
    request(
      lfsUrl(repo, `objects/${oid}/${size}`),
      { method: 'PUT', headers: { ...basic, 'Content-Type': 'application/octet-stream', 'Content-Length': size } },
      source,
    );

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lfs-bench-'));
  const results = [];
  let ok = true;
  const check = (name, value, target, passed) => {
    results.push(`| ${name} | ${value} | ${target} | ${passed ? 'met' : 'missed'} |`);
    ok &&= passed;
  };
  try {
    if (ONLY.has('transfer')) {
      const repo = await newRepo('transfer');
      const plainDir = path.join(work, 'plain');
      fs.mkdirSync(plainDir);
      const plain = await startChild(PLAIN_SERVER, plainDir);
      try {
        const seed = `anvil-${Date.now()}`;
        const oid = await oidOf(SIZE, seed);
        // A small object first on each side: the JIT, lazily loaded modules and the first statements.
        const warm = await oidOf(1 << 20, `${seed}-warm`);
        await put(repo, warm, 1 << 20, body(1 << 20, `${seed}-warm`));
        await request(`${plain.url}/warm`, { method: 'PUT', headers: { 'Content-Length': 1 << 20 } }, body(1 << 20, seed));
        console.log(`load average at start of the transfers: ${loadAverage()}`);
        const sides = {
          plain: {
            pid: plain.pid,
            up: () => request(`${plain.url}/${oid}`, { method: 'PUT', headers: { 'Content-Length': SIZE } }, body(SIZE, seed)),
            down: () => request(`${plain.url}/${oid}`, { method: 'GET' }),
          },
          anvil: {
            pid: serverPid,
            up: () => put(repo, oid, SIZE, body(SIZE, seed)),
            down: () => request(lfsUrl(repo, `objects/${oid}`), { method: 'GET', headers: basic }),
          },
        };
        const figures = { plain: { up: [], down: [], upCpu: [] }, anvil: { up: [], down: [], upCpu: [] } };
        const rssStart = { plain: rssOf(plain.pid), anvil: serverPid ? rssOf(serverPid) : NaN };
        const rssPeak = { ...rssStart };
        const timer = setInterval(() => {
          rssPeak.plain = Math.max(rssPeak.plain, rssOf(plain.pid));
          if (serverPid) rssPeak.anvil = Math.max(rssPeak.anvil, rssOf(serverPid));
        }, 50);
        try {
          for (let round = 0; round < ROUNDS; round++) {
            // Each side goes first in every other round, so that a change of load weighs on both alike.
            for (const name of round % 2 === 0 ? ['plain', 'anvil'] : ['anvil', 'plain']) {
              const side = sides[name];
              const cpuBefore = side.pid ? cpuSecondsOf(side.pid) : NaN;
              const up = await timed(side.up);
              if (up.result.status !== 200) throw new Error(`${name} upload: ${up.result.status} ${up.result.text}`);
              figures[name].upCpu.push(side.pid ? cpuSecondsOf(side.pid) - cpuBefore : NaN);
              const down = await timed(side.down);
              if (down.result.status !== 200 || down.result.bytes !== SIZE)
                throw new Error(`${name} download: ${down.result.status}, ${down.result.bytes} bytes`);
              figures[name].up.push(up.seconds);
              figures[name].down.push(down.seconds);
              if (name === 'plain') fs.rmSync(path.join(plainDir, oid), { force: true });
            }
          }
        } finally {
          clearInterval(timer);
        }
        console.log(`load average at end of the transfers: ${loadAverage()}; ${ROUNDS} rounds each, alternating`);
        const mib = SIZE / 1024 / 1024;
        const rate = (seconds) => mib / seconds;
        const show = (name) =>
          `${name}: up ${figures[name].up.map((seconds) => rate(seconds).toFixed(0)).join(', ')} MiB/s (server CPU ${figures[name].upCpu
            .map((seconds) => seconds.toFixed(2))
            .join(', ')} s), down ${figures[name].down.map((seconds) => rate(seconds).toFixed(0)).join(', ')} MiB/s`;
        console.log(`transfer of ${mib} MiB, each round:\n  ${show('plain')}\n  ${show('anvil')}`);
        const growth = (name) => (rssPeak[name] - rssStart[name]) / 1024 / 1024;
        console.log(`server RSS growth: plain ${growth('plain').toFixed(1)} MiB, anvil ${growth('anvil').toFixed(1)} MiB`);
        const upRatio = median(figures.plain.up) / median(figures.anvil.up);
        const downRatio = median(figures.plain.down) / median(figures.anvil.down);
        check(
          `upload of ${mib} MiB, vs node:http to disk (medians of ${ROUNDS})`,
          `${rate(median(figures.anvil.up)).toFixed(0)} vs ${rate(median(figures.plain.up)).toFixed(0)} MiB/s (${upRatio.toFixed(2)}); server CPU ${median(figures.anvil.upCpu).toFixed(2)} vs ${median(figures.plain.upCpu).toFixed(2)} s`,
          '≥ 0.8',
          upRatio >= 0.8,
        );
        check(
          `download of ${mib} MiB, vs node:http from disk (medians of ${ROUNDS})`,
          `${rate(median(figures.anvil.down)).toFixed(0)} vs ${rate(median(figures.plain.down)).toFixed(0)} MiB/s (${downRatio.toFixed(2)})`,
          '≥ 0.8',
          downRatio >= 0.8,
        );
        if (serverPid)
          check(
            'server RSS growth during all transfers',
            `${growth('anvil').toFixed(1)} MiB (plain: ${growth('plain').toFixed(1)} MiB)`,
            '< 32 MiB',
            growth('anvil') < 32,
          );
      } finally {
        plain.stop();
      }
    }

    if (ONLY.has('batch')) {
      const repo = await newRepo('batch');
      const missing = Array.from({ length: BATCH }, () => ({ oid: crypto.randomBytes(32).toString('hex'), size: 1024 }));
      const uploads = [];
      for (let i = 0; i < BATCH_RUNS; i++) {
        const answered = await timed(() => batch(repo, 'upload', missing));
        if (answered.result.status !== 200) throw new Error(`batch: ${answered.result.status} ${answered.result.text}`);
        uploads.push(answered.seconds * 1000);
      }
      // Objects the repository holds, uploaded a few at a time.
      const held = Array.from({ length: BATCH }, (_, i) => Buffer.from(`lfs bench object ${i} ${Date.now()}`));
      const pointers = held.map((content) => ({ oid: crypto.createHash('sha256').update(content).digest('hex'), size: content.length }));
      for (let i = 0; i < held.length; i += 16) {
        const answers = await Promise.all(held.slice(i, i + 16).map((content, j) => put(repo, pointers[i + j].oid, content.length, content)));
        for (const answer of answers) if (answer.status !== 200) throw new Error(`upload: ${answer.status} ${answer.text}`);
      }
      const downloads = [];
      for (let i = 0; i < BATCH_RUNS; i++) {
        const answered = await timed(() => batch(repo, 'download', pointers));
        if (answered.result.status !== 200 || JSON.parse(answered.result.text).objects.some((o) => !o.actions))
          throw new Error('download batch: objects missing');
        downloads.push(answered.seconds * 1000);
      }
      const up = median(uploads);
      const down = median(downloads);
      check(`batch of ${BATCH} uploads (objects missing), median of ${BATCH_RUNS}`, `${up.toFixed(0)} ms`, '< 200 ms', up < 200);
      check(`batch of ${BATCH} downloads (objects held), median of ${BATCH_RUNS}`, `${down.toFixed(0)} ms`, '< 200 ms', down < 200);
    }

    if (ONLY.has('clone')) {
      const repo = await newRepo('clone');
      const remote = new URL(`${base}/${repo}.git`);
      remote.username = user;
      remote.password = token;
      const env = { ...process.env, HOME: work, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' };
      const git = (args, cwd) => run('git', args, { cwd, env });
      await git(['config', '--global', 'user.name', 'bench'], work);
      await git(['config', '--global', 'user.email', 'bench@example.com'], work);
      await git(['lfs', 'install'], work);
      const source = path.join(work, 'source');
      fs.mkdirSync(source);
      await git(['init', '--quiet', '-b', 'main'], source);
      await git(['lfs', 'track', '*.bin'], source);
      for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(source, `file-${i}.bin`), crypto.randomBytes(4096));
      await git(['add', '.'], source);
      await git(['commit', '--quiet', '-m', 'files'], source);
      await git(['push', '--quiet', remote.href, 'main'], source);

      const referenceDir = path.join(work, 'reference');
      fs.mkdirSync(referenceDir);
      const objects = path.join(source, '.git', 'lfs', 'objects');
      for (const a of fs.readdirSync(objects))
        for (const b of fs.readdirSync(path.join(objects, a)))
          for (const oid of fs.readdirSync(path.join(objects, a, b))) fs.copyFileSync(path.join(objects, a, b, oid), path.join(referenceDir, oid));
      const reference = await startChild(REFERENCE_LFS, referenceDir);
      try {
        const pullFrom = async (name, lfsUrlSetting) => {
          const clone = path.join(work, name);
          await run('git', ['clone', '--quiet', remote.href, clone], { cwd: work, env: { ...env, GIT_LFS_SKIP_SMUDGE: '1' } });
          if (lfsUrlSetting) await git(['config', 'lfs.url', lfsUrlSetting], clone);
          const pulled = await timed(() => git(['lfs', 'pull'], clone));
          const sample = fs.readFileSync(path.join(clone, 'file-0.bin'));
          if (sample.length !== 4096) throw new Error(`${name}: file-0.bin is not the object`);
          return pulled.seconds;
        };
        // One pull of each as a warm-up (the page cache, git-lfs's own start), then alternating measured pulls.
        await pullFrom('warm-anvil');
        await pullFrom('warm-reference', reference.url);
        const anvil = [];
        const plainRuns = [];
        for (let i = 0; i < PULLS; i++) {
          anvil.push(await pullFrom(`anvil-${i}`));
          plainRuns.push(await pullFrom(`reference-${i}`, reference.url));
        }
        const whole = await timed(() => run('git', ['clone', '--quiet', remote.href, path.join(work, 'whole')], { cwd: work, env }));
        const ratio = median(anvil) / median(plainRuns);
        check(
          `git lfs pull of ${FILES} files, vs the reference server (median of ${PULLS})`,
          `${median(anvil).toFixed(2)} s vs ${median(plainRuns).toFixed(2)} s (${ratio.toFixed(2)}×)`,
          '≤ 1.2×',
          ratio <= 1.2,
        );
        console.log(`whole git clone from anvil with ${FILES} LFS files: ${whole.seconds.toFixed(2)} s`);
      } finally {
        reference.stop();
      }
    }
  } finally {
    for (const repo of made) await api('DELETE', `/repos/${repo}`).catch(() => undefined);
    fs.rmSync(work, { recursive: true, force: true });
  }
  console.log('| measurement | figure | target | |\n|---|---|---|---|');
  for (const line of results) console.log(line);
  console.log(ok ? 'PASS' : 'FAIL');
  process.exit(ok ? 0 : 1);
}

main().catch((error) => {
  console.error(error.stack || error.message);
  process.exit(2);
});
