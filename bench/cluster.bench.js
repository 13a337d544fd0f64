'use strict';
/*
 * Throughput of one Anvil deployment at a bounded load: BENCH_CONNS clients, each sending its next request when the
 * last was answered, for BENCH_SECONDS: three of four `GET /api/v1/repos/{BENCH_REPO}`, one of four
 * `GET /api/v1/user`, with BENCH_TOKEN. Run it against one instance alone and against the gateway in front of
 * several (the cluster suite does both: test/cluster) to compare. Prints one JSON line; exits 1 if any answer was
 * not 200. Loopback only.
 */
const { baseUrl, bounded, percentile } = require('./support');

async function main() {
  const base = baseUrl();
  const seconds = bounded('BENCH_SECONDS', 10, 600);
  const connections = bounded('BENCH_CONNS', 16, 256);
  const token = process.env.BENCH_TOKEN;
  const repo = process.env.BENCH_REPO;
  if (!token || !repo) {
    console.error('BENCH_TOKEN and BENCH_REPO (owner/name) are required');
    process.exit(2);
  }
  const headers = { Authorization: `token ${token}` };
  const latencies = [];
  const failures = {};
  let sent = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        const path = sent++ % 4 === 3 ? '/api/v1/user' : `/api/v1/repos/${repo}`;
        const begin = performance.now();
        let status;
        try {
          const response = await fetch(`${base}${path}`, { headers });
          await response.arrayBuffer();
          status = response.status;
        } catch (error) {
          status = error.cause?.code ?? 'error';
        }
        latencies.push(performance.now() - begin);
        if (status !== 200) failures[status] = (failures[status] ?? 0) + 1;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((x, y) => x - y);
  const figures = {
    url: base,
    connections,
    seconds: Number(elapsed.toFixed(1)),
    requests: latencies.length,
    perSecond: Math.round(latencies.length / elapsed),
    p50Ms: Number(percentile(latencies, 50).toFixed(1)),
    p99Ms: Number(percentile(latencies, 99).toFixed(1)),
    failures,
  };
  console.log(JSON.stringify(figures));
  if (Object.keys(failures).length > 0) process.exit(1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
