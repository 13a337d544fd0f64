'use strict';
/*
 * The SSH transport's thread (see ssh-transport.ts): it listens, speaks the SSH protocol through ssh2 (key
 * exchange, encryption, packets, channel windows) and hands the server's thread only questions and plaintext. The
 * server's thread admits every connection, decides every sign-in and runs every command; what a clone's pack
 * costs here (encrypting it, padding and framing its packets, writing them) no longer costs the thread that
 * answers API requests.
 *
 * The thread starts before the server knows what to listen on: ssh2 loads here meanwhile, beside the rest of the
 * server's start. Its first message says it.
 * In (first):  { t: 'listen', options: { hostKey, listenHost, listenPort, maxConnections } }
 * Out: { t: 'listening', address, family, port } | { t: 'failed', message, code, port } | { t: 'log', message }
 *      { t: 'arrive', a, ip, port }  { t: 'left', a }
 *      { t: 'conn', c, a, ip }  { t: 'auth', c, r, method, username, key }  { t: 'checked', k, verdict }
 *      { t: 'ready', c }  { t: 'gone', c }
 *      { t: 'exec', c, ch, ring, command, protocol }  { t: 'shell', c, ch, ring }
 *      { t: 'data', ch, d }  { t: 'eof', ch }  { t: 'room', ch }  { t: 'closed', ch }  { t: 'shut' }
 * In:  { t: 'admit' | 'drop', a }  { t: 'check', c, r, k, content }  { t: 'auth', c, r, a: 'accept' | 'reject' }
 *      { t: 'end', c }
 *      { t: 'data', ch }  { t: 'stderr', ch, d }  { t: 'end', ch, status }  { t: 'close' | 'pause' | 'resume', ch }
 *      { t: 'stop' }  { t: 'shutdown' }
 * What a channel's client sends comes as `data` messages; what the server's thread writes to it crosses in the
 * channel's ring (byte-ring.js), `data` and `room` only waking the other side.
 */
const net = require('node:net');
const { isMainThread, parentPort } = require('node:worker_threads');
const { Server, utils } = require('ssh2');
const { ByteRing } = require('./byte-ring.js');

/** The ring of a channel's standard output (byte-ring.js), and the most taken from it for one channel write. */
const RING_BYTES = 256 * 1024;
const READ_BYTES = 64 * 1024;

/**
 * ssh2 writes each packet (at most 32 KiB of a channel's data) to the socket on its own: a clone's pack, arriving
 * in 64 KiB reads, cost two socket writes per read. The packets written in one turn of the event loop leave in one
 * write (cork, then uncork on the next tick), as the HTTP path's chunks do.
 */
function coalesceWrites(socket) {
  const write = socket.write.bind(socket);
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  socket.write = (...args) => {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    return write(...args);
  };
}

/** Only this variable of a session's environment matters; its value is checked by the server's thread. */
const MAX_PROTOCOL_LENGTH = 256;

function serve(options, port) {
  const connections = new Map();
  const channels = new Map();
  let nextId = 1;
  const post = (message) => port.postMessage(message);

  const openChannel = (channel) => {
    const ch = nextId++;
    const entry = { ch, channel, ring: new ByteRing(RING_BYTES), blocked: false, ending: null, ended: false };
    channels.set(ch, entry);
    channel.on('data', (data) => {
      // A copy of its own, moved to the other thread rather than copied again there.
      const copy = new Uint8Array(data);
      port.postMessage({ t: 'data', ch, d: copy }, [copy.buffer]);
    });
    channel.on('end', () => post({ t: 'eof', ch }));
    channel.on('error', () => undefined);
    channel.on('close', () => {
      channels.delete(ch);
      post({ t: 'closed', ch });
    });
    return entry;
  };

  /*
   * Writes what the ring holds to the channel, as fast as ssh2 takes it (the client's window); ends the channel
   * once the server's thread has ended it and the ring is empty.
   */
  const drain = (ch, entry) => {
    if (entry.blocked || entry.ended) return;
    for (;;) {
      if (entry.channel.destroyed) return;
      const piece = entry.ring.read(READ_BYTES);
      if (!piece) {
        // Empty: the next write wakes this side, unless one came just before it said so.
        entry.ring.heard();
        if (entry.ring.size === 0) break;
        continue;
      }
      if (piece.wakeWriter) post({ t: 'room', ch });
      if (!entry.channel.write(piece.chunk)) {
        entry.blocked = true;
        entry.channel.once('drain', () => {
          entry.blocked = false;
          drain(ch, entry);
        });
        return;
      }
    }
    if (!entry.ending || entry.ring.size > 0) return;
    entry.ended = true;
    if (entry.ending.status !== undefined) entry.channel.exit(entry.ending.status);
    entry.channel.end();
  };

  const server = new Server(
    {
      hostKeys: [Buffer.from(options.hostKey)],
      ident: 'Anvil',
      // OpenSSH clients pick chacha20-poly1305 first when offered, and without ssh2's optional native binding it
      // runs in JavaScript: AES-GCM (node's native crypto) serves clones about twice as fast (bench/git.bench.js).
      algorithms: { cipher: { remove: 'chacha20-poly1305@openssh.com' } },
    },
    (client, info) => {
      const c = nextId++;
      const entry = { client, auths: new Map(), sessions: 0 };
      connections.set(c, entry);
      post({ t: 'conn', c, a: peers.get(`${info.ip}|${info.port}`), ip: info.ip });
      client.on('error', () => undefined);
      client.on('close', () => {
        connections.delete(c);
        post({ t: 'gone', c });
      });
      client.on('authentication', (context) => {
        const r = nextId++;
        entry.auths.set(r, context);
        post({
          t: 'auth',
          c,
          r,
          method: context.method,
          username: context.username,
          key: context.method === 'publickey' ? { algo: context.key.algo, data: context.key.data } : undefined,
        });
      });
      client.on('ready', () => {
        post({ t: 'ready', c });
        client.on('session', (acceptSession) => {
          const session = acceptSession();
          let protocol;
          session.on('env', (accept, _reject, env) => {
            if (env.key === 'GIT_PROTOCOL' && typeof env.val === 'string' && env.val.length <= MAX_PROTOCOL_LENGTH) protocol = env.val;
            accept?.();
          });
          for (const refused of ['pty', 'subsystem', 'x11', 'auth-agent']) session.on(refused, (_accept, reject) => reject?.());
          session.on('shell', (accept) => {
            const { ch, ring } = openChannel(accept());
            post({ t: 'shell', c, ch, ring: ring.shared });
          });
          session.on('exec', (accept, _reject, exec) => {
            const { ch, ring } = openChannel(accept());
            post({ t: 'exec', c, ch, ring: ring.shared, command: exec.command, protocol });
          });
        });
      });
    },
  );
  server.on('error', (error) => post({ t: 'log', message: `SSH server: ${error.message}` }));

  /*
   * A new TCP connection waits, unread, for the server's thread to admit it under the caps on connections not
   * logged in (in all and from one address; the total cap is the listener's maxConnections) before ssh2 spends
   * anything on it; what it costs until then is one socket.
   */
  const arrivals = new Map();
  const peers = new Map();
  const listener = new net.Server((socket) => {
    const a = nextId++;
    const peer = `${socket.remoteAddress}|${socket.remotePort}`;
    arrivals.set(a, socket);
    peers.set(peer, a);
    socket.once('close', () => {
      arrivals.delete(a);
      peers.delete(peer);
      post({ t: 'left', a });
    });
    socket.on('error', () => undefined);
    post({ t: 'arrive', a, ip: socket.remoteAddress ?? '', port: socket.remotePort });
  });
  listener.maxConnections = options.maxConnections;
  listener.once('error', (error) => post({ t: 'failed', message: error.message, code: error.code, port: error.port }));
  listener.listen(options.listenPort, options.listenHost, () => {
    listener.on('error', (error) => post({ t: 'log', message: `SSH server: ${error.message}` }));
    const { address, family, port: bound } = listener.address();
    post({ t: 'listening', address, family, port: bound });
  });

  const onChannel = (ch, act) => {
    const entry = channels.get(ch);
    // The client may have gone already; there is then nobody to tell.
    if (!entry || entry.ended || entry.channel.destroyed) return;
    act(entry);
  };

  const handle = (message) => {
    switch (message.t) {
      case 'data':
        return onChannel(message.ch, (entry) => drain(message.ch, entry));
      case 'stderr':
        return onChannel(message.ch, ({ channel }) => channel.stderr.write(typeof message.d === 'string' ? message.d : Buffer.from(message.d)));
      case 'end':
        if (message.ch !== undefined)
          return onChannel(message.ch, (entry) => {
            entry.ending = { status: message.status };
            drain(message.ch, entry);
          });
        return connections.get(message.c)?.client.end();
      case 'close':
        return onChannel(message.ch, (entry) => {
          entry.ended = true;
          entry.channel.close();
        });
      case 'pause':
        return onChannel(message.ch, ({ channel }) => channel.pause());
      case 'resume':
        return onChannel(message.ch, ({ channel }) => channel.resume());
      case 'check': {
        // The key registered under the offered key's fingerprint: the same key, and the signature made with it?
        const context = connections.get(message.c)?.auths.get(message.r);
        const parsed = context ? utils.parseKey(message.content) : null;
        let verdict = 'refused';
        if (parsed && !(parsed instanceof Error) && parsed.getPublicSSH().equals(context.key.data)) {
          if (!context.signature || !context.blob) verdict = 'query';
          else if (parsed.verify(context.blob, context.signature, context.hashAlgo)) verdict = 'valid';
        }
        return post({ t: 'checked', k: message.k, verdict });
      }
      case 'auth': {
        const entry = connections.get(message.c);
        const context = entry?.auths.get(message.r);
        if (!context) return;
        entry.auths.delete(message.r);
        return message.a === 'accept' ? context.accept() : context.reject(['publickey']);
      }
      case 'admit': {
        const socket = arrivals.get(message.a);
        if (!socket || socket.destroyed) return;
        coalesceWrites(socket);
        return server.injectSocket(socket);
      }
      case 'drop':
        return arrivals.get(message.a)?.destroy();
      case 'stop':
        return listener.close();
      case 'shutdown':
        listener.close();
        for (const { client } of connections.values()) client.end();
        for (const socket of arrivals.values()) socket.destroy();
        // Ends written to the sockets leave before the thread stops.
        return setImmediate(() => post({ t: 'shut' }));
      default:
        return undefined;
    }
  };
  port.on('message', (message) => {
    try {
      handle(message);
    } catch (error) {
      // One connection's trouble (a channel ssh2 has already closed, say) is not every connection's.
      post({ t: 'log', message: `SSH transport: ${error.message}` });
    }
  });
}

if (!isMainThread && parentPort) parentPort.once('message', (message) => serve(message.options, parentPort));

module.exports = { coalesceWrites };
