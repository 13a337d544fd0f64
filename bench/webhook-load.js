#!/usr/bin/env node
/*
 * The floor of bench/webhooks.bench.js: the least any sender could do for a delivery, in a process of its own
 * at the sink's priority. It keeps no outbox, claims nothing and records no outcome; it signs a real payload
 * with the hook's secret (HMAC-SHA1 and HMAC-SHA256, as every delivery must be), sets Forgejo's headers and
 * POSTs it to the sink over kept-alive connections, `maxSockets` at once. Pushes to a repository with no hook,
 * each followed by `hooks` such requests, then show what sending that many requests costs a push on this
 * machine, whoever sends them.
 *   in:  { payload, maxSockets } once, then { send: { url, hooks } } after each push
 *   out: { sent: n } when a push's requests were all answered
 */
'use strict';

const { createHmac, randomUUID } = require('node:crypto');
const http = require('node:http');

let agent = null;
let payload = Buffer.alloc(0);

function post(url, index) {
  return new Promise((resolve) => {
    const secret = `secret-${index}`;
    const sha256 = createHmac('sha256', secret).update(payload).digest('hex');
    const sha1 = createHmac('sha1', secret).update(payload).digest('hex');
    const uuid = randomUUID();
    const headers = { 'Content-Type': 'application/json', 'Content-Length': String(payload.length), 'User-Agent': 'Anvil-Webhook' };
    for (const family of ['Forgejo', 'Gitea', 'Gogs']) {
      headers[`X-${family}-Delivery`] = uuid;
      headers[`X-${family}-Event`] = 'push';
      headers[`X-${family}-Event-Type`] = 'push';
      headers[`X-${family}-Signature`] = sha256;
    }
    headers['X-Hub-Signature'] = `sha1=${sha1}`;
    headers['X-Hub-Signature-256'] = `sha256=${sha256}`;
    headers['X-GitHub-Delivery'] = uuid;
    headers['X-GitHub-Event'] = 'push';
    headers['X-GitHub-Event-Type'] = 'push';
    const request = http.request(`${url}/hook/${index}`, { method: 'POST', headers, agent }, (response) => {
      response.resume();
      response.on('end', resolve);
      response.on('error', resolve);
    });
    request.on('error', resolve);
    request.end(payload);
  });
}

process.on('message', async (message) => {
  if (message.payload !== undefined) {
    payload = Buffer.from(message.payload, 'utf8');
    agent = new http.Agent({ keepAlive: true, maxSockets: message.maxSockets });
    return;
  }
  if (message.send) {
    const { url, hooks } = message.send;
    await Promise.all(Array.from({ length: hooks }, (_, index) => post(url, index)));
    process.send({ sent: hooks });
  }
});
process.on('disconnect', () => process.exit(0));
