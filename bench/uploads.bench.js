#!/usr/bin/env node
/*
 * Upload/download benchmark of release attachments against a running Anvil, compared with a plain `node:http`
 * server that streams request bodies to disk and files back (the floor any upload path can reach on this
 * machine). Both get the same load: BENCH_PARALLEL uploads of BENCH_SIZE_MIB each at once, then the same
 * number of downloads of those files at once.
 *
 *   BENCH_URL=http://127.0.0.1:3000 BENCH_TOKEN=<token> BENCH_SERVER_PID=<anvil pid> node bench/uploads.bench.js
 *
 * The token's user gets a new repository (auto-initialised) with one release; the attachments stay on it
 * (delete the repository `uploads-bench-*` afterwards to free the space). With BENCH_SERVER_PID, the server's
 * resident memory is sampled from /proc every 50 ms and its growth over the run is reported.
 *
 * Environment:
 *   BENCH_URL          server base URL (default http://127.0.0.1:3000); loopback hosts only
 *   BENCH_TOKEN        access token with write:repository (required)
 *   BENCH_SERVER_PID   pid of the Anvil server process, for RSS (optional; Linux only)
 *   BENCH_PARALLEL     uploads (and downloads) at once (default 16, at most 64)
 *   BENCH_SIZE_MIB     size of each file (default 50, at most 1024)
 *   BENCH_ROUNDS       measured rounds per server, alternating baseline and Anvil (default 3, at most 10)
 * One warm-up round per server (8 MiB files) comes first (JIT, lazily loaded modules, first database statements), then
 * the rounds; the median round of each server is compared, because on a shared machine single rounds vary a
 * lot. Anvil's attachments are deleted after each round. Prints throughput (MiB/s) of both servers, the ratio,
 * and RSS growth (peak during the measured rounds over the RSS after warm-up); exits 1 when Anvil reaches less
 * than 70% of the baseline in either direction, when RSS grows by 64 MiB or more, or on any unexpected answer.
 */
'use strict';

const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { Readable } = require('node:stream');
const { bounded, baseUrl } = require('./support');

const PARALLEL = bounded('BENCH_PARALLEL', 16, 64);
const SIZE = bounded('BENCH_SIZE_MIB', 50, 1024) * 1024 * 1024;
const ROUNDS = bounded('BENCH_ROUNDS', 3, 10);
/** Big enough for the JIT and the heap to settle, so that RSS growth measures the transfers, not start-up. */
const WARM_UP_SIZE = 8 * 1024 * 1024;
const CHUNK = Buffer.alloc(256 * 1024, 0x5a);

/** A body of `size` bytes produced on the fly, so that the client holds no file in memory either. */
function body(size) {
  let left = size;
  return new Readable({
    read() {
      if (left <= 0) return this.push(null);
      const n = Math.min(left, CHUNK.length);
      left -= n;
      this.push(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n));
    },
  });
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
      response.on('end', () => resolve({ status: response.statusCode, bytes, text: Buffer.concat(chunks).toString('utf8', 0, 4096) }));
      response.on('error', reject);
    });
    req.on('error', reject);
    if (source) source.pipe(req);
    else req.end();
  });
}

async function timed(work) {
  const start = process.hrtime.bigint();
  const result = await work();
  return { result, seconds: Number(process.hrtime.bigint() - start) / 1e9 };
}

function mibPerSecond(bytes, seconds) {
  return bytes / 1024 / 1024 / seconds;
}

/** The baseline: a child process running a minimal stream-to-disk / stream-from-disk server. */
async function startBaseline() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uploads-bench-baseline-'));
  const script = `
    const fs = require('node:fs'); const http = require('node:http'); const path = require('node:path');
    const { pipeline } = require('node:stream/promises');
    const dir = process.argv[1];
    const server = http.createServer(async (req, res) => {
      const file = path.join(dir, path.basename(req.url));
      try {
        if (req.method === 'PUT') { await pipeline(req, fs.createWriteStream(file)); res.writeHead(201).end(); return; }
        const { size } = await fs.promises.stat(file);
        res.writeHead(200, { 'Content-Length': size });
        await pipeline(fs.createReadStream(file), res);
      } catch (error) { if (!res.headersSent) res.writeHead(500); res.end(); }
    });
    server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
  `;
  const child = spawn(process.execPath, ['-e', script, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    child.stdout.once('data', (data) => resolve(Number(String(data).trim())));
    child.once('exit', () => reject(new Error('baseline server exited')));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stop: () => {
      child.kill('SIGTERM');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function rssOf(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) * 1024;
  } catch {
    return NaN;
  }
}

async function round(label, upload, download, size = SIZE) {
  const up = await timed(() => Promise.all(Array.from({ length: PARALLEL }, (_, i) => upload(i, size))));
  for (const r of up.result) if (r.status !== 201) throw new Error(`${label} upload: ${r.status} ${r.text}`);
  const down = await timed(() => Promise.all(Array.from({ length: PARALLEL }, (_, i) => download(i, up.result[i]))));
  for (const r of down.result) if (r.status !== 200 || r.bytes !== size) throw new Error(`${label} download: ${r.status}, ${r.bytes} bytes`);
  const total = PARALLEL * size;
  return { up: mibPerSecond(total, up.seconds), down: mibPerSecond(total, down.seconds), uploads: up.result };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main() {
  const base = baseUrl();
  const token = process.env.BENCH_TOKEN;
  if (!token) {
    console.error('BENCH_TOKEN is required');
    process.exit(2);
  }
  const serverPid = process.env.BENCH_SERVER_PID ? Number(process.env.BENCH_SERVER_PID) : 0;
  const auth = { Authorization: `token ${token}` };
  const api = async (method, apiPath, json) => {
    const response = await fetch(`${base}/api/v1${apiPath}`, {
      method,
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: json && JSON.stringify(json),
    });
    if (!response.ok) throw new Error(`${method} ${apiPath}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const me = await api('GET', '/user');
  const repo = await api('POST', '/user/repos', { name: `uploads-bench-${Date.now().toString(36)}`, auto_init: true });
  const release = await api('POST', `/repos/${me.login}/${repo.name}/releases`, { tag_name: 'bench' });
  console.log(`${PARALLEL} parallel uploads and downloads of ${SIZE / 1024 / 1024} MiB each, median of ${ROUNDS} rounds`);

  const baseline = await startBaseline();
  const plainUpload = (i, size) => request(`${baseline.url}/file-${i}`, { method: 'PUT', headers: { 'Content-Length': size } }, body(size));
  const plainDownload = (i) => request(`${baseline.url}/file-${i}`, { method: 'GET' });
  const uploadPath = `${base}/api/v1/repos/${me.login}/${repo.name}/releases/${release.id}/assets?name=`;
  const anvilUpload = (i, size) =>
    request(
      `${uploadPath}file-${i}.bin`,
      { method: 'POST', headers: { ...auth, 'Content-Type': 'application/octet-stream', 'Content-Length': size } },
      body(size),
    );
  const anvilDownload = (i, uploaded) => request(`${base}/attachments/${JSON.parse(uploaded.text).uuid}`, { method: 'GET', headers: auth });
  const clean = async (uploads) => {
    for (const uploaded of uploads)
      await api('DELETE', `/repos/${me.login}/${repo.name}/releases/${release.id}/assets/${JSON.parse(uploaded.text).id}`).catch(() => undefined);
  };
  const plainRounds = [];
  const anvilRounds = [];
  let growth = NaN;
  let plainGrowth = NaN;
  try {
    await round('baseline warm-up', plainUpload, plainDownload, WARM_UP_SIZE);
    await clean((await round('anvil warm-up', anvilUpload, anvilDownload, WARM_UP_SIZE)).uploads);
    const start = serverPid ? rssOf(serverPid) : NaN;
    let peak = start;
    const plainStart = rssOf(baseline.pid);
    let plainPeak = plainStart;
    const timer = setInterval(() => {
      if (serverPid) peak = Math.max(peak, rssOf(serverPid));
      plainPeak = Math.max(plainPeak, rssOf(baseline.pid));
    }, 50);
    try {
      for (let i = 0; i < ROUNDS; i++) {
        plainRounds.push(await round('baseline', plainUpload, plainDownload));
        const measured = await round('anvil', anvilUpload, anvilDownload);
        anvilRounds.push(measured);
        await clean(measured.uploads);
      }
    } finally {
      clearInterval(timer);
    }
    growth = peak - start;
    plainGrowth = plainPeak - plainStart;
  } finally {
    baseline.stop();
  }
  const plain = { up: median(plainRounds.map((r) => r.up)), down: median(plainRounds.map((r) => r.down)) };
  const anvil = { up: median(anvilRounds.map((r) => r.up)), down: median(anvilRounds.map((r) => r.down)) };
  const measured = { growth };
  const ratioUp = anvil.up / plain.up;
  const ratioDown = anvil.down / plain.down;
  const f = (n) => n.toFixed(1).padStart(7);
  console.log(`baseline node:http  upload ${f(plain.up)} MiB/s  download ${f(plain.down)} MiB/s`);
  console.log(`anvil attachments   upload ${f(anvil.up)} MiB/s  download ${f(anvil.down)} MiB/s`);
  console.log(`ratio               upload ${f(ratioUp * 100)} %     download ${f(ratioDown * 100)} %`);
  const growthMiB = measured.growth / 1024 / 1024;
  console.log(`baseline RSS growth ${(plainGrowth / 1024 / 1024).toFixed(1)} MiB`);
  console.log(`anvil RSS growth    ${Number.isNaN(growthMiB) ? 'not measured (set BENCH_SERVER_PID)' : `${growthMiB.toFixed(1)} MiB`}`);
  const ok = ratioUp >= 0.7 && ratioDown >= 0.7 && !(growthMiB >= 64);
  console.log(ok ? 'PASS' : 'FAIL');
  process.exit(ok ? 0 : 1);
}

main().catch((error) => {
  console.error(error.message);
  process.exit(1);
});
