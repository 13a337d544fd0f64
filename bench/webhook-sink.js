#!/usr/bin/env node
/*
 * The receiving end of bench/webhooks.bench.js, in a process of its own: an HTTP server on 127.0.0.1 that
 * answers each delivery after 1–5 ms, or holds the answers while paused. It stands for receivers on other
 * machines, so the bench lowers its priority (BENCH_SINK_NICE): on a shared 2-core machine its CPU then comes
 * from idle time rather than from the pushes being measured. It reports to its parent over IPC:
 *   { ready: port }                       once listening
 *   { arrivals: [[uuid, atMs, event, path]] }  batched every 20 ms; atMs on the wall clock
 *                                         (performance.timeOrigin + performance.now(), comparable across
 *                                         processes); path: the hook's URL path
 *   { inFlight: [uuid], id }              the answer to { inFlight: true, id }
 *   { sample: body }                      the body of the first push delivery after { sample: true }
 * and takes { paused: boolean } (unpausing answers everything held).
 */
'use strict';

const http = require('node:http');

let paused = false;
const held = [];
const inFlight = new Set();
let pending = [];
let sampleWanted = false;

const server = http.createServer((request, response) => {
  const chunks = [];
  if (sampleWanted && request.headers['x-forgejo-event'] === 'push') request.on('data', (chunk) => chunks.push(chunk));
  else request.resume();
  request.on('end', () => {
    if (chunks.length > 0 && sampleWanted) {
      sampleWanted = false;
      process.send({ sample: Buffer.concat(chunks).toString('utf8') });
    }
    const uuid = request.headers['x-forgejo-delivery'];
    pending.push([uuid, performance.timeOrigin + performance.now(), request.headers['x-forgejo-event'], request.url]);
    const answer = () => {
      inFlight.delete(uuid);
      if (!response.destroyed) response.end('ok');
    };
    inFlight.add(uuid);
    if (paused) held.push(answer);
    else setTimeout(answer, 1 + Math.random() * 4);
  });
});
server.keepAliveTimeout = 60_000;

setInterval(() => {
  if (pending.length === 0) return;
  process.send({ arrivals: pending });
  pending = [];
}, 20);

process.on('message', (message) => {
  if (typeof message.paused === 'boolean') {
    paused = message.paused;
    if (!paused) for (const answer of held.splice(0)) answer();
  }
  if (message.sample) sampleWanted = true;
  if (message.inFlight) process.send({ inFlight: [...inFlight], id: message.id });
});
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => process.send({ ready: server.address().port }));
