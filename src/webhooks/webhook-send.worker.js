'use strict';
/*
 * The thread that sends webhook requests (see webhook-sender.ts). Deliveries are background work: on Linux a
 * thread has a nice value of its own, and this one lowers its own to `workerData.nice`, so the bodies, their
 * signatures, the requests, responses and their sockets take CPU the server's requests and git's pushes leave
 * idle. The delivery loop decides what goes out (the address, already vetted against WEBHOOK_ALLOWED_HOSTS; the
 * headers; the payload); this thread encodes the body (`payload=<json>` for a form), signs its exact bytes with
 * the hook's secret, connects to exactly that address, sends, and reads at most `keepBytes` of the answer.
 *
 * Three deadlines end a request, whichever comes first: `connectTimeoutMs` for its connection to open (TLS
 * included), `firstByteTimeoutMs` from its last byte sent to the answer's first, `timeoutMs` for all of it. A
 * receiver that accepts and never answers thus gives the worker back after the first-byte deadline.
 *
 * In:  [{ id, url, method, headers, payload, form, secret, authorization, address, family, timeoutMs,
 *        connectTimeoutMs, firstByteTimeoutMs, keepBytes }, …], or { close }
 * Out: [{ id, status, body, retryAfter, error, durationMs }, …]  (error: a connection failure or a deadline)
 * Both ways a message carries what one turn of the sender's event loop had: each message wakes the other thread.
 */
const { createHmac } = require('node:crypto');
const http = require('node:http');
const https = require('node:https');
const os = require('node:os');
const { parentPort, workerData } = require('node:worker_threads');

if (process.platform === 'linux' && workerData.nice > 0) {
  try {
    // pid 0 is the calling thread on Linux (only there: elsewhere it would be the whole process).
    os.setPriority(0, workerData.nice);
  } catch {
    // Not allowed: the thread keeps the server's priority.
  }
}

const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: workerData.maxSockets }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: workerData.maxSockets }),
};

let answers = [];

/** Queues an answer; the answers of one turn of the event loop go back in one message. */
function answer(message) {
  if (answers.length === 0) {
    setImmediate(() => {
      const batch = answers;
      answers = [];
      parentPort.postMessage(batch);
    });
  }
  answers.push(message);
}

/**
 * Forgejo's signatures: HMACs of the exact body bytes (of the JSON payload for a GET, which has no body) with
 * the hook's secret, empty without one.
 */
function sign(headers, secret, bytes) {
  const sha1 = secret === '' ? '' : createHmac('sha1', secret).update(bytes).digest('hex');
  const sha256 = secret === '' ? '' : createHmac('sha256', secret).update(bytes).digest('hex');
  headers['X-Forgejo-Signature'] = sha256;
  headers['X-Gitea-Signature'] = sha256;
  headers['X-Gogs-Signature'] = sha256;
  headers['X-Hub-Signature'] = `sha1=${sha1}`;
  headers['X-Hub-Signature-256'] = `sha256=${sha256}`;
}

function send(job) {
  const started = performance.now();
  const get = job.method === 'GET';
  const body = Buffer.from(get ? '' : job.form ? `payload=${encodeURIComponent(job.payload)}` : job.payload, 'utf8');
  const headers = job.headers;
  sign(headers, job.secret, get ? Buffer.from(job.payload, 'utf8') : body);
  if (job.authorization !== '') headers.Authorization = job.authorization;
  if (!get) headers['Content-Length'] = String(body.length);
  const url = new URL(job.url);
  const secure = url.protocol === 'https:';
  let settled = false;
  /** The deadline now running (connect, then first byte), beside the whole request's. */
  let step = null;
  let answered = false;
  const settle = (outcome) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    clearTimeout(step);
    answer({ id: job.id, durationMs: Math.round(performance.now() - started), ...outcome });
  };
  const giveUp = (message) => outgoing.destroy(new Error(message));
  const lookup = (_host, options, callback) => {
    if (options && options.all) callback(null, [{ address: job.address, family: job.family }]);
    else callback(null, job.address, job.family);
  };
  const outgoing = (secure ? https : http).request(url, { method: job.method, headers, lookup, agent: agents[url.protocol] }, (response) => {
    answered = true;
    clearTimeout(step);
    const chunks = [];
    let kept = 0;
    response.on('data', (chunk) => {
      if (kept < job.keepBytes) {
        chunks.push(chunk.subarray(0, job.keepBytes - kept));
        kept += Math.min(chunk.length, job.keepBytes - kept);
      }
    });
    response.on('error', (error) => settle({ error: error.message }));
    response.on('end', () => {
      settle({ status: response.statusCode || 0, body: Buffer.concat(chunks).toString('utf8'), retryAfter: response.headers['retry-after'] });
    });
  });
  const timer = setTimeout(() => giveUp(`timed out after ${job.timeoutMs} ms (WEBHOOK_TIMEOUT)`), job.timeoutMs);
  if (job.connectTimeoutMs > 0) {
    outgoing.on('socket', (socket) => {
      // A kept-alive socket is open already; a new one is timed until it is (for https, until the handshake ends).
      if (outgoing.reusedSocket) return;
      step = setTimeout(() => giveUp(`no connection within ${job.connectTimeoutMs} ms (WEBHOOK_CONNECT_TIMEOUT)`), job.connectTimeoutMs);
      socket.once(secure ? 'secureConnect' : 'connect', () => clearTimeout(step));
    });
  }
  if (job.firstByteTimeoutMs > 0) {
    // 'finish': the request's last byte was handed to the socket; the receiver has had all it needs to answer.
    outgoing.on('finish', () => {
      if (settled || answered) return;
      clearTimeout(step);
      step = setTimeout(() => giveUp(`no answer within ${job.firstByteTimeoutMs} ms of the request (WEBHOOK_FIRST_BYTE_TIMEOUT)`), job.firstByteTimeoutMs);
    });
  }
  outgoing.on('error', (error) => settle({ error: error.message }));
  outgoing.end(body);
}

parentPort.on('message', (message) => {
  if (message.close) {
    agents['http:'].destroy();
    agents['https:'].destroy();
    parentPort.close();
    return;
  }
  for (const job of message) {
    try {
      send(job);
    } catch (error) {
      answer({ id: job.id, error: error.message, durationMs: 0 });
    }
  }
});
