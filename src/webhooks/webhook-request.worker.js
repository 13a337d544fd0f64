// The webhook requests' thread, started by src/webhooks/webhook-requests.ts: it sends each request it is given
// to the address the server checked, and answers with the status, the first bytes of the body and Retry-After,
// or the error. Its CPU priority is lowered first (on Linux a thread has a nice value of its own), so that the
// HTTP work of deliveries yields the CPU to the server's requests and to git.
'use strict';
const http = require('node:http');
const https = require('node:https');
const os = require('node:os');
const { parentPort, workerData } = require('node:worker_threads');

try {
  if (workerData.niceness > 0) os.setPriority(workerData.niceness);
} catch {
  // Not allowed or not supported: the requests are sent at the server's priority.
}
const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: workerData.maxSockets }),
  https: new https.Agent({ keepAlive: true, maxSockets: workerData.maxSockets }),
};

parentPort.on('message', (message) => {
  if (message.stop) {
    agents.http.destroy();
    agents.https.destroy();
    return;
  }
  const { id, url, method, headers, body, address, family, timeoutMs, bodyLimit } = message;
  let settled = false;
  let timer = null;
  const settle = (answer) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    parentPort.postMessage({ id, ...answer });
  };
  // The connection goes to exactly the address that was checked: the name cannot be re-pointed meanwhile.
  const lookup = (_host, options, callback) => {
    if (options && options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
  let outgoing;
  try {
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    outgoing = (secure ? https : http).request(target, { method, headers, lookup, agent: secure ? agents.https : agents.http }, (response) => {
      const chunks = [];
      let kept = 0;
      response.on('data', (chunk) => {
        if (kept < bodyLimit) {
          chunks.push(chunk.subarray(0, bodyLimit - kept));
          kept += Math.min(chunk.length, bodyLimit - kept);
        }
      });
      response.on('error', (error) => settle({ error: error.message }));
      response.on('end', () => settle({ status: response.statusCode || 0, body: Buffer.concat(chunks).toString('utf8'), retryAfter: response.headers['retry-after'] }));
    });
  } catch (error) {
    settle({ error: error.message });
    return;
  }
  timer = setTimeout(() => outgoing.destroy(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
  outgoing.on('error', (error) => settle({ error: error.message }));
  outgoing.end(body ? Buffer.from(body.buffer, body.byteOffset, body.byteLength) : undefined);
});
