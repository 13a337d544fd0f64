#!/usr/bin/env node
/*
 * The layers of the HTTP path a V8 CPU profile's samples were taken in (docs/version-request.md): each busy sample
 * goes to the innermost frame of its stack that belongs to a layer (socket writes, Node's HTTP, Express's router,
 * Nest's routing, Anvil's platform pieces, the controller), so that a layer's share is what it costs itself, not
 * what the layers it calls cost. Samples of the first SKIP_MS (the start-up and the warm-up) are left out. With
 * CPU_US (the server's processor time per request, measured without the profiler) each share is also given in µs.
 *
 *   node bench/profile-layers.js /tmp/prof/CPU.….cpuprofile [SKIP_MS=3000] [CPU_US]
 */
'use strict';

const fs = require('node:fs');

const [file, skipArg, perRequestArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/profile-layers.js FILE.cpuprofile [SKIP_MS] [CPU_US]');
  process.exit(2);
}
const skipMs = Number(skipArg ?? 3000);
const perRequest = Number(perRequestArg ?? 0);
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

/** Layer name, and whether a frame (function name, script URL) belongs to it; the first that matches wins. */
const LAYERS = [
  ['JSON answer (encoding, headers)', (name, url) => /http\/json-answer\.js/.test(url)],
  ['controller', (name, url) => /dist\/src\/.*controller\.js/.test(url)],
  ['auth guard', (name, url) => /dist\/src\/auth\//.test(url)],
  ['rate limits', (name, url) => /dist\/src\/.*rate-limit/.test(url)],
  ['route prefilter', (name, url) => /http\/route-prefilter\.js/.test(url)],
  ['front door (request log, security headers, CORS)', (name, url) => /http\/(front-door|cors)\.js/.test(url)],
  ['client address', (name, url) => /http\/client-address\.js/.test(url)],
  ['request scope (AsyncLocalStorage)', (name, url) => /request-scope\.js|node:(internal\/)?async_hooks|async_local_storage/.test(url)],
  ['request timeout', (name, url) => /http\/request-timeout\.js/.test(url)],
  ['Nest routing (guards, pipes, handler call)', (name, url) => /node_modules\/@nestjs\//.test(url)],
  ['Express router and response', (name, url) => /node_modules\/(router|express|finalhandler|on-finished|parseurl|qs)\//.test(url)],
  ['Node HTTP (parser, response headers)', (name, url) => /node:_http_|node:http$/.test(url)],
  ['socket writes', (name, url) => name === 'writev' || /stream_base_commons|node:net$/.test(url)],
];

const counts = new Map();
let busy = 0;
let at = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  at += profile.timeDeltas[i];
  if ((at - profile.startTime) / 1000 < skipMs) continue;
  const leaf = byId.get(profile.samples[i]);
  const name = leaf.callFrame.functionName;
  if (name === '(idle)') continue;
  busy += 1;
  let layer = name === '(garbage collector)' ? 'garbage collection' : name === '(program)' ? 'V8 (program)' : null;
  for (let id = leaf.id; !layer && id !== undefined; id = parent.get(id)) {
    const frame = byId.get(id).callFrame;
    layer = LAYERS.find(([, test]) => test(frame.functionName, frame.url))?.[0] ?? null;
  }
  layer ??= 'other (streams, timers, promises)';
  counts.set(layer, (counts.get(layer) ?? 0) + 1);
}
for (const [layer, n] of [...counts].sort((a, b) => b[1] - a[1])) {
  const share = n / busy;
  console.log(`${(100 * share).toFixed(1).padStart(5)}%${perRequest ? `  ${(share * perRequest).toFixed(1).padStart(6)} µs` : ''}  ${layer}`);
}
console.log(`${busy} busy samples after the first ${skipMs} ms`);
