#!/usr/bin/env node
/*
 * Load benchmark of POST /markdown against a running Anvil: a large generated document (headings, emphasis,
 * links, mentions, tables, task lists, code blocks; about 500 KB) rendered in gfm mode, N times with a bounded
 * number of requests in flight. Rendering runs in worker threads, so a /version probe is sent alongside and
 * its latency reported too: it shows whether rendering holds up other requests.
 *
 *   BENCH_URL=http://127.0.0.1:3000 BENCH_TOKEN=<40 hex> node bench/markdown.bench.js
 *
 * Environment:
 *   BENCH_URL          server base URL (default http://127.0.0.1:3000); loopback hosts only
 *   BENCH_TOKEN        access token (any scope); required, /markdown needs a signed-in caller
 *   BENCH_REQUESTS     total renders (default 8, at most 1000)
 *   BENCH_CONCURRENCY  renders in flight (default 2, at most 16)
 *   BENCH_DOC_KB       document size in KB (default 500, at most 4096; the server's MARKDOWN_MAX_SIZE applies)
 *   BENCH_MAX_SECONDS  stop after this long whatever is left (default 300, at most 900)
 * Prints render latency percentiles, throughput, the /version probe's latencies and the error count; exits 1
 * on any error.
 */
'use strict';

const { bounded, baseUrl, percentile } = require('./support');

const REQUEST_TIMEOUT_MS = 180_000;
const PROBE_INTERVAL_MS = 250;

/** A README-like document of about `bytes` bytes. */
function document(bytes) {
  const section = (i) =>
    [
      `## Section ${i}: configuration and usage`,
      '',
      `Some *emphasis*, **strong text**, ~~struck~~ and \`inline code\`; see [the guide](docs/guide-${i}.md), ` +
        `https://example.com/issues/${i} and @root for details.`,
      '',
      '| Option | Default | Meaning |',
      '|---|:-:|---|',
      `| \`opt${i}\` | ${i} | what option ${i} does |`,
      '',
      `- [x] done ${i}`,
      `- [ ] todo ${i}`,
      '',
      '```js',
      `const value${i} = compute(${i}); // <b>not html</b>`,
      '```',
      '',
      `> A quote with <kbd>Ctrl</kbd>+<kbd>C</kbd> and a footnote-like [reference][ref${i}].`,
      '',
      `[ref${i}]: https://example.com/ref/${i}`,
      '',
    ].join('\n');
  const parts = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const part = section(i);
    parts.push(part);
    size += Buffer.byteLength(part);
  }
  return parts.join('').slice(0, bytes);
}

function summary(label, samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const f = (value) => (Number.isNaN(value) ? '-' : value.toFixed(1).padStart(9));
  return `${label.padEnd(16)} n=${String(sorted.length).padStart(4)}  p50=${f(percentile(sorted, 50))}  p90=${f(percentile(sorted, 90))}  p99=${f(percentile(sorted, 99))}  max=${f(sorted[sorted.length - 1] ?? NaN)} ms`;
}

async function main() {
  const base = baseUrl();
  if (!process.env.BENCH_TOKEN) {
    console.error('BENCH_TOKEN is required: POST /markdown needs a signed-in caller');
    process.exit(2);
  }
  const total = bounded('BENCH_REQUESTS', 8, 1000);
  const concurrency = bounded('BENCH_CONCURRENCY', 2, 16);
  const docBytes = bounded('BENCH_DOC_KB', 500, 4096) * 1024;
  const deadline = Date.now() + bounded('BENCH_MAX_SECONDS', 300, 900) * 1000;
  const headers = { Authorization: `token ${process.env.BENCH_TOKEN}`, 'Content-Type': 'application/json' };
  const body = JSON.stringify({ Text: document(docBytes), Mode: 'gfm', Context: 'owner/repo' });
  const renders = [];
  const probes = [];
  let errors = 0;
  let issued = 0;
  let htmlBytes = 0;
  let running = true;

  async function worker() {
    while (issued < total && Date.now() < deadline) {
      issued += 1;
      const started = process.hrtime.bigint();
      try {
        const response = await fetch(`${base}/api/v1/markdown`, { method: 'POST', headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        const text = await response.text();
        if (!response.ok) throw new Error(`HTTP ${response.status} ${text.slice(0, 200)}`);
        htmlBytes += Buffer.byteLength(text);
      } catch (error) {
        errors += 1;
        if (errors <= 5) console.error(`render: ${error.message}`);
        continue;
      }
      renders.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  }

  /** An unrelated request while renders run: its latency shows whether rendering blocks the server. */
  async function probe() {
    while (running) {
      const started = process.hrtime.bigint();
      try {
        const response = await fetch(`${base}/api/v1/version`, { signal: AbortSignal.timeout(10_000) });
        await response.arrayBuffer();
        if (response.ok) probes.push(Number(process.hrtime.bigint() - started) / 1e6);
      } catch {
        // A failed probe is reported as a missing sample, not as a render error.
      }
      await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
    }
  }

  console.log(`POST /markdown: document ${(Buffer.byteLength(body) / 1024).toFixed(0)} KB (JSON), ${total} renders, concurrency ${concurrency}`);
  const started = Date.now();
  const probing = probe();
  await Promise.all(Array.from({ length: concurrency }, worker));
  running = false;
  await probing;
  const seconds = (Date.now() - started) / 1000;
  console.log(
    `${renders.length} ok, ${errors} errors, ${seconds.toFixed(1)} s, ${(renders.length / seconds).toFixed(2)} renders/s, ` +
      `${((renders.length * docBytes) / 1024 / 1024 / seconds).toFixed(2)} MB/s in, ${(htmlBytes / 1024 / 1024 / seconds).toFixed(2)} MB/s out`,
  );
  console.log(summary('render', renders));
  console.log(summary('/version probe', probes));
  if (errors > 0) process.exit(1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
