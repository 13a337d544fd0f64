// The launcher process (src/git/git-launcher.ts starts it): a plain node script with a small heap that spawns git
// on request, so that the server forks this small process (about a millisecond) instead of its whole heap (tens
// of milliseconds, blocking the event loop). Protocol over the IPC channel: in { id, file, args, env, input
// (base64), group, maxOutput } or { type: 'kill', id }; out { id, code, signal, stdout (base64), stderr } or
// { id, error, errorCode }. It kills each git (or its process group) when told to, and all of them when the
// server goes away.
'use strict';
const { spawn } = require('node:child_process');
const running = new Map();
const stop = (child, group) => {
  try {
    if (group) return process.kill(-child.pid, 'SIGKILL');
  } catch {}
  try { child.kill('SIGKILL'); } catch {}
};
process.on('message', (message) => {
  if (message.type === 'kill') {
    const entry = running.get(message.id);
    if (entry) stop(entry.child, entry.group);
    return;
  }
  let done = false;
  const reply = (answer) => {
    if (done) return;
    done = true;
    running.delete(message.id);
    if (process.connected) process.send({ id: message.id, ...answer });
  };
  let child;
  try {
    child = spawn(message.file || 'git', message.args, { env: message.env, stdio: ['pipe', 'pipe', 'pipe'], detached: message.group, shell: false });
  } catch (error) {
    return reply({ error: String(error && error.message), errorCode: error && error.code });
  }
  // No descriptors left: Node started nothing and gave no pipes; the error event follows on the next tick.
  if (!child.stdout || !child.stderr || !child.stdin) {
    child.on('error', () => undefined);
    return reply({ error: 'git could not be started: too many open files', errorCode: 'EMFILE' });
  }
  running.set(message.id, { child, group: message.group });
  const out = [];
  const err = [];
  let outBytes = 0;
  let errBytes = 0;
  child.stdout.on('data', (chunk) => { outBytes += chunk.length; if (outBytes <= message.maxOutput) out.push(chunk); });
  child.stderr.on('data', (chunk) => { errBytes += chunk.length; if (errBytes <= 65536) err.push(chunk); });
  child.on('error', (error) => reply({ error: String(error && error.message), errorCode: error && error.code }));
  child.on('close', (code, signal) => reply({ code, signal, stdout: Buffer.concat(out).toString('base64'), stderr: Buffer.concat(err).toString('utf8') }));
  child.stdin.on('error', () => undefined);
  child.stdin.end(message.input ? Buffer.from(message.input, 'base64') : '');
});
process.on('disconnect', () => {
  for (const entry of running.values()) stop(entry.child, entry.group);
  process.exit(0);
});
