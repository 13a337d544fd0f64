// The launcher process (src/git/git-launcher.ts starts it): a plain node script with a small heap that spawns git
// on request, so that the server forks this small process (about a millisecond) instead of its whole heap (tens
// of milliseconds, blocking the event loop), and that measures a repository's size, so that the thousands of
// file lookups of a walk are not callbacks on the server's event loop. Protocol over the IPC channel: in { id,
// file, args, env, input (base64), group, maxOutput }, { type: 'start', id, file, args, env, group }, { type:
// 'size', id, dir, skip: { suffixes, prefixes, patterns, paths } } or { type: 'kill', id }; out { id, code, signal, stdout
// (base64), stderr } ({ id, overflow: true } when git wrote more than maxOutput and was stopped), { id, size } or
// { id, error, errorCode }. A started git is streamed by the server itself:
// its three pipes go to the server as handles ({ id, pid, pipe: 'stdin' | 'stdout' | 'stderr' }), then { id,
// exited: true, code, signal } when it ends. It kills each git (or its process group) when told to, and all of
// them when the server goes away.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const vanished = (error) => error && (error.code === 'ENOENT' || error.code === 'ENOTDIR');

// What `operation` answers, or undefined when the entry it looks at vanished meanwhile.
function unlessVanished(operation) {
  try {
    return operation();
  } catch (error) {
    if (vanished(error)) return undefined;
    throw error;
  }
}

// Directories whose entries git only ever adds, renames into place or removes: the loose objects' fan-out and the
// pack directory (what is written in place there, a temporary object or pack, is not counted). Such a directory
// that has not changed since it was last summed (same inode, modification and change times, to the nanosecond)
// keeps its sum: a push walks the few directories it touched, not the thousands of loose objects a repository holds
// between two auto-gcs. A directory changed less than SETTLED_MS ago is summed every time, since a change within
// the file system's timestamp granularity of the last sum would leave its times as they were.
const RENAME_ONLY = /\/objects\/([0-9a-f]{2}|pack)$/;
const SETTLED_MS = 2000n;
const MAX_SUMS = 200_000;
const sums = new Map();

// Total bytes of the regular files under `dir`, the names and paths (from the walk's start, `/`-separated) `skip`
// describes left out (with what is under them); an entry that vanishes meanwhile counts 0. Each directory is read
// and its files' sizes looked up synchronously, and the walk gives this process's loop a turn once it has looked
// at YIELD_AFTER entries since the last: a file lookup is a few microseconds in the kernel, while each one sent to
// libuv's thread pool cost a round trip that, on a loaded machine, made the walk of a small repository (160
// entries) 25-35 ms of a push. `walk` counts the entries looked at since the last turn.
const YIELD_AFTER = 512;
async function sizeOf(dir, skip, from = '', walk = { entries: 0 }) {
  if (walk.entries >= YIELD_AFTER) {
    walk.entries = 0;
    await new Promise((resolve) => setImmediate(resolve));
  }
  walk.entries += 1;
  if (!RENAME_ONLY.test(dir)) return sumEntries(dir, skip, from, walk);
  const times = unlessVanished(() => fs.statSync(dir, { bigint: true }));
  if (!times) return 0;
  const key = `${skip.key}\0${from}\0${dir}`;
  const kept = sums.get(key);
  if (kept && kept.ino === times.ino && kept.mtimeNs === times.mtimeNs && kept.ctimeNs === times.ctimeNs) return kept.size;
  // Summed after its times were read: a change meanwhile moves them, and the next walk sums it again.
  const size = await sumEntries(dir, skip, from, walk);
  if (times.mtimeMs < BigInt(Date.now()) - SETTLED_MS) {
    if (sums.size >= MAX_SUMS) sums.clear();
    sums.set(key, { ino: times.ino, mtimeNs: times.mtimeNs, ctimeNs: times.ctimeNs, size });
  } else sums.delete(key);
  return size;
}

async function sumEntries(dir, skip, from, walk) {
  const entries = unlessVanished(() => fs.readdirSync(dir, { withFileTypes: true }));
  if (!entries) return 0;
  walk.entries += entries.length;
  let total = 0;
  const directories = [];
  for (const entry of entries) {
    const name = entry.name;
    if (
      skip.suffixes.some((suffix) => name.endsWith(suffix)) ||
      skip.prefixes.some((prefix) => name.startsWith(prefix)) ||
      skip.patterns.some((pattern) => pattern.test(name)) ||
      skip.paths.has(from + name)
    )
      continue;
    const child = path.join(dir, name);
    if (entry.isDirectory()) directories.push({ child, from: `${from}${name}/` });
    else if (entry.isFile()) total += unlessVanished(() => fs.lstatSync(child))?.size ?? 0;
  }
  for (const directory of directories) total += await sizeOf(directory.child, skip, directory.from, walk);
  return total;
}
const running = new Map();
// An answer to the server. One it can no longer take (it went away meanwhile: the channel's write fails with EPIPE,
// which would otherwise be an uncaught 'error' of this process) is dropped: 'disconnect' then stops every git.
const tell = (message) => {
  if (process.connected) process.send(message, undefined, {}, () => undefined);
};
const stop = (child, group) => {
  try {
    if (group) return process.kill(-child.pid, 'SIGKILL');
  } catch {}
  try {
    child.kill('SIGKILL');
  } catch {}
};
// Starts git for the server to stream. Its pipes go to the server as bare handles, taken from their sockets here
// at once: this process's event loop never reads from them, and its ChildProcess cannot close them when git ends
// while they wait their turn on the channel (a handle is sent only once the one before it was acknowledged). Each
// is closed here once sent; the server holds the only copy of its end.
function start(message) {
  const fail = (error) => tell({ id: message.id, error: String(error && error.message), errorCode: error && error.code });
  let child;
  try {
    child = spawn(message.file || 'git', message.args, { env: message.env, stdio: ['pipe', 'pipe', 'pipe'], detached: message.group, shell: false });
  } catch (error) {
    return fail(error);
  }
  if (!child.stdout || !child.stderr || !child.stdin) {
    child.on('error', () => undefined);
    return fail({ message: 'git could not be started: too many open files', code: 'EMFILE' });
  }
  child.on('error', (error) => {
    running.delete(message.id);
    if (child.pid === undefined) fail(error);
  });
  // Not started (ENOENT, EAGAIN): the error event follows, and only it is answered.
  if (child.pid === undefined) return;
  const handles = ['stdin', 'stdout', 'stderr'].map((pipe) => {
    const handle = child[pipe]._handle;
    handle.readStop();
    child[pipe]._handle = null;
    return { pipe, handle };
  });
  running.set(message.id, { child, group: message.group });
  child.on('exit', (code, signal) => {
    running.delete(message.id);
    tell({ id: message.id, exited: true, code, signal });
  });
  for (const { pipe, handle } of handles) {
    if (!process.connected) {
      handle.close();
      continue;
    }
    process.send({ id: message.id, pid: child.pid, pipe }, handle, {}, () => handle.close());
  }
}

process.on('message', (message) => {
  if (message.type === 'start') return start(message);
  if (message.type === 'kill') {
    const entry = running.get(message.id);
    if (entry) stop(entry.child, entry.group);
    return;
  }
  if (message.type === 'size') {
    const skip = {
      key: JSON.stringify(message.skip),
      suffixes: message.skip.suffixes,
      prefixes: message.skip.prefixes,
      patterns: message.skip.patterns.map((source) => new RegExp(source)),
      paths: new Set(message.skip.paths ?? []),
    };
    sizeOf(message.dir, skip).then(
      (size) => tell({ id: message.id, size }),
      (error) => tell({ id: message.id, error: String(error && error.message), errorCode: error && error.code }),
    );
    return;
  }
  let done = false;
  const reply = (answer) => {
    if (done) return;
    done = true;
    running.delete(message.id);
    tell({ id: message.id, ...answer });
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
  let overflow = false;
  child.stdout.on('data', (chunk) => {
    outBytes += chunk.length;
    if (outBytes <= message.maxOutput) return void out.push(chunk);
    // More than the caller may hold: git is stopped, and the answer says so rather than being cut short.
    if (!overflow) stop(child, message.group);
    overflow = true;
  });
  child.stderr.on('data', (chunk) => {
    errBytes += chunk.length;
    if (errBytes <= 65536) err.push(chunk);
  });
  child.on('error', (error) => reply({ error: String(error && error.message), errorCode: error && error.code }));
  child.on('close', (code, signal) =>
    reply(overflow ? { overflow: true } : { code, signal, stdout: Buffer.concat(out).toString('base64'), stderr: Buffer.concat(err).toString('utf8') }),
  );
  child.stdin.on('error', () => undefined);
  child.stdin.end(message.input ? Buffer.from(message.input, 'base64') : '');
});
process.on('disconnect', () => {
  for (const entry of running.values()) stop(entry.child, entry.group);
  process.exit(0);
});
