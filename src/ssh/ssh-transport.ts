import { EventEmitter } from 'node:events';
import * as path from 'node:path';
import { Duplex, Writable } from 'node:stream';
import { Worker } from 'node:worker_threads';

// One cohesive thing, kept whole though long: the server thread's side of the SSH transport's thread.

const TRANSPORT_WORKER_FILE = path.join(__dirname, 'ssh-transport.worker.js');

/** The ring of bytes in shared memory a channel's standard output crosses in (byte-ring.js). */
interface ByteRing {
  readonly shared: SharedArrayBuffer;
  write(chunk: Uint8Array): { count: number; wake: boolean };
  waitForRoom(): boolean;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ByteRing } = require('./byte-ring.js') as { ByteRing: new (shared: SharedArrayBuffer) => ByteRing };

/** What the transport's thread listens on, and for how many connections at most (docs/git-transports.md, "SSH"). */
export interface SshTransportOptions {
  hostKey: Buffer;
  listenHost: string;
  listenPort: number;
  maxConnections: number;
}

/** What the server thread does with the transport's questions. */
export interface SshTransportHandler {
  /** A TCP connection arrived: answer with `admit` (ssh2 then speaks with it) or `drop`. */
  arrive(arrival: number, ip: string, port: number): void;
  /** That TCP connection closed, admitted or not. */
  left(arrival: number): void;
  /** An admitted connection spoke SSH: its sign-in attempts and commands come as its events. */
  connection(connection: SshConnection, arrival: number, ip: string): void;
  /** Something the transport's thread wants logged. */
  log(message: string): void;
  /** The thread stopped unasked (logged already): its connections are gone. */
  stopped(): void;
}

/** A sign-in attempt as ssh2 reports it, answered with `accept` or `reject`. */
export interface SshSignIn {
  method: string;
  username: string;
  /** The public key offered (method `publickey`). */
  key?: { algo: string; data: Buffer };
  /**
   * Whether the offered key is `content` (a registered key, OpenSSH format): `query` when it is and the client only
   * asks whether it would do, `valid` when it is and the client's signature was made with it, else `refused`.
   */
  check(content: string): Promise<'query' | 'valid' | 'refused'>;
  accept(): void;
  reject(): void;
}

type Message = { t: string; [field: string]: unknown };

/**
 * A transport's thread started ahead of its use: ssh2 loads there (some 150 ms of processor time) while the server's
 * own start goes on, rather than after it, before the server can listen. Until taken it holds no process open.
 */
export class SshTransportThread {
  private readonly worker = new Worker(TRANSPORT_WORKER_FILE, { resourceLimits: { maxYoungGenerationSizeMb: 8 } });
  private ended: string | null = null;
  private readonly end = (reason: string) => void (this.ended ??= reason);
  private readonly onError = (error: Error) => this.end(error.message);
  private readonly onExit = (code: number) => this.end(`exit code ${code}`);

  constructor() {
    this.worker.unref();
    this.worker.on('error', this.onError);
    this.worker.on('exit', this.onExit);
  }

  /** The thread, for one SshTransport; throws if it stopped meanwhile. */
  take(): Worker {
    this.worker.off('error', this.onError);
    this.worker.off('exit', this.onExit);
    if (this.ended !== null) throw new Error(`the SSH transport's thread stopped before it listened: ${this.ended}`);
    this.worker.ref();
    return this.worker;
  }

  /** Stops a thread that was never taken. */
  async discard(): Promise<void> {
    await this.worker.terminate();
  }
}

/**
 * The SSH transport's thread (ssh-transport.worker.js) seen from the server's thread: the encryption, packets and
 * socket writes of every SSH connection run there, so a big clone over SSH costs this thread what one over HTTP
 * does (reading git's output and handing it on); admission, sign-in and commands are decided here as before.
 */
export class SshTransport {
  private readonly connections = new Map<number, SshConnection>();
  private readonly channels = new Map<number, SshChannel>();
  private readonly checks = new Map<number, (verdict: 'query' | 'valid' | 'refused') => void>();
  private nextCheck = 1;
  private address: { address: string; family: string; port: number } | null = null;
  private stopped = false;
  private shut: (() => void) | null = null;

  private constructor(
    private readonly worker: Worker,
    private readonly handler: SshTransportHandler,
  ) {}

  /**
   * Has the thread listen on `options.listenPort` (a thread started now unless one is given); resolves once it
   * listens, rejects when it cannot.
   */
  static async start(options: SshTransportOptions, handler: SshTransportHandler, thread = new SshTransportThread()): Promise<SshTransport> {
    const worker = thread.take();
    const transport = new SshTransport(worker, handler);
    try {
      await new Promise<void>((resolve, reject) => {
        transport.listening = resolve;
        transport.failed = reject;
        worker.on('message', (message: Message) => transport.receive(message));
        worker.on('error', (error) => transport.gone(error.message));
        worker.on('exit', (code) => transport.gone(`exit code ${code}`));
        worker.postMessage({ t: 'listen', options });
      });
    } catch (error) {
      transport.stopped = true;
      await worker.terminate();
      throw error;
    }
    return transport;
  }

  private listening: (() => void) | null = null;
  private failed: ((error: Error) => void) | null = null;

  /** `{ address, family, port }` as bound. */
  get bound(): { address: string; family: string; port: number } | null {
    return this.address;
  }

  admit(arrival: number): void {
    this.post({ t: 'admit', a: arrival });
  }

  drop(arrival: number): void {
    this.post({ t: 'drop', a: arrival });
  }

  /** Stops accepting connections; those open go on. */
  stopListening(): void {
    this.post({ t: 'stop' });
  }

  /** Ends every connection and stops the thread. */
  async close(): Promise<void> {
    if (this.stopped) return;
    await new Promise<void>((resolve) => {
      this.shut = resolve;
      this.post({ t: 'shutdown' });
      setTimeout(resolve, 2_000).unref();
    });
    this.stopped = true;
    await this.worker.terminate();
  }

  /** @internal */
  post(message: Message): void {
    if (!this.stopped) this.worker.postMessage(message);
  }

  private receive(message: Message): void {
    switch (message.t) {
      case 'listening':
        this.address = message as unknown as { address: string; family: string; port: number };
        return this.listening?.();
      case 'failed':
        // As listen's own error: its code (EADDRINUSE, EACCES) and port say what went wrong (server/serve.ts).
        return this.failed?.(Object.assign(new Error(message.message as string), { code: message.code, port: message.port }));
      case 'log':
        return this.handler.log(message.message as string);
      case 'arrive':
        return this.handler.arrive(message.a as number, message.ip as string, message.port as number);
      case 'left':
        return this.handler.left(message.a as number);
      case 'conn': {
        const connection = new SshConnection(this, message.c as number);
        this.connections.set(connection.id, connection);
        return this.handler.connection(connection, message.a as number, message.ip as string);
      }
      case 'auth':
        return void this.connections.get(message.c as number)?.emit('authentication', this.signIn(message));
      case 'ready':
        return void this.connections.get(message.c as number)?.emit('ready');
      case 'gone': {
        const connection = this.connections.get(message.c as number);
        this.connections.delete(message.c as number);
        return void connection?.emit('close');
      }
      case 'exec':
      case 'shell': {
        const channel = new SshChannel(this, message.ch as number, new ByteRing(message.ring as SharedArrayBuffer));
        this.channels.set(channel.id, channel);
        const connection = this.connections.get(message.c as number);
        if (message.t === 'shell') return void connection?.emit('shell', channel);
        return void connection?.emit('exec', channel, message.command as string, message.protocol as string | undefined);
      }
      case 'data':
        return this.channels.get(message.ch as number)?.received(toBuffer(message.d as Uint8Array));
      case 'eof':
        return this.channels.get(message.ch as number)?.received(null);
      case 'room':
        return this.channels.get(message.ch as number)?.pour();
      case 'closed': {
        const channel = this.channels.get(message.ch as number);
        this.channels.delete(message.ch as number);
        return channel?.closedByPeer();
      }
      case 'checked': {
        const settle = this.checks.get(message.k as number);
        this.checks.delete(message.k as number);
        return settle?.(message.verdict as 'query' | 'valid' | 'refused');
      }
      case 'shut':
        return this.shut?.();
      default:
        return undefined;
    }
  }

  private signIn(message: Message): SshSignIn {
    const key = message.key as { algo: string; data: Uint8Array } | undefined;
    const c = message.c;
    const r = message.r;
    return {
      method: message.method as string,
      username: message.username as string,
      key: key ? { algo: key.algo, data: toBuffer(key.data) } : undefined,
      check: (content) =>
        new Promise((resolve) => {
          if (this.stopped) return resolve('refused');
          const k = this.nextCheck++;
          this.checks.set(k, resolve);
          this.post({ t: 'check', c, r, k, content });
        }),
      accept: () => this.post({ t: 'auth', c, r, a: 'accept' }),
      reject: () => this.post({ t: 'auth', c, r, a: 'reject' }),
    };
  }

  /** The thread stopped: whatever it carried is gone. */
  private gone(reason: string): void {
    if (this.failed && !this.address) this.failed(new Error(`the SSH transport thread stopped (${reason})`));
    if (this.stopped) return;
    this.stopped = true;
    this.handler.log(`the SSH transport thread stopped (${reason}); its connections are lost`);
    for (const channel of this.channels.values()) channel.closedByPeer();
    for (const connection of this.connections.values()) connection.emit('close');
    this.channels.clear();
    this.connections.clear();
    for (const settle of this.checks.values()) settle('refused');
    this.checks.clear();
    this.shut?.();
    if (this.address) this.handler.stopped();
  }
}

/**
 * One SSH connection: `authentication` (an SshSignIn), `ready`, `exec` (channel, command, GIT_PROTOCOL as the
 * client set it), `shell` (channel) and `close`.
 */
export class SshConnection extends EventEmitter {
  constructor(
    private readonly transport: SshTransport,
    readonly id: number,
  ) {
    super();
  }

  end(): void {
    this.transport.post({ t: 'end', c: this.id });
  }
}

/**
 * A session channel: git's standard input is what it reads, its standard output what is written to it, and
 * `stderr` its standard error. A write waits while the channel's ring is full, which it stays while ssh2 waits on
 * the client's window: backpressure reaches git as on a socket. `close` comes when the client's side of the
 * channel has closed too; `destroy()` cuts the channel.
 */
export class SshChannel extends Duplex {
  readonly stderr: Writable;
  private pending: { chunk: Uint8Array; callback: () => void } | null = null;
  private paused = false;
  private status: number | undefined;
  private peerClosed = false;

  constructor(
    private readonly transport: SshTransport,
    readonly id: number,
    private readonly ring: ByteRing,
  ) {
    super({ allowHalfOpen: true, autoDestroy: false });
    this.stderr = new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        if (!this.destroyed) transport.post({ t: 'stderr', ch: id, d: new Uint8Array(chunk) });
        callback();
      },
    });
  }

  /** The exit status, sent with the channel's end (`end()`), after everything written before it. */
  exit(status: number): void {
    this.status = status;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.destroyed) return callback();
    this.pending = { chunk, callback };
    this.pour();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.transport.post({ t: 'end', ch: this.id, status: this.status });
    callback();
  }

  override _read(): void {
    if (!this.paused) return;
    this.paused = false;
    this.transport.post({ t: 'resume', ch: this.id });
  }

  /** Cut: the channel closes at once, whatever of its output is still on the way. */
  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.peerClosed) this.transport.post({ t: 'close', ch: this.id });
    this.release();
    callback(error);
  }

  /** @internal What the client sent (null: it sent EOF). */
  received(data: Buffer | null): void {
    if (this.push(data) || data === null || this.paused) return;
    this.paused = true;
    this.transport.post({ t: 'pause', ch: this.id });
  }

  /** @internal Copies the pending write into the ring as far as there is room; done once all of it went in. */
  pour(): void {
    const pending = this.pending;
    if (!pending || this.destroyed) return;
    for (;;) {
      const { count, wake } = this.ring.write(pending.chunk);
      if (wake) this.transport.post({ t: 'data', ch: this.id });
      pending.chunk = pending.chunk.subarray(count);
      if (pending.chunk.length === 0) break;
      // Full: the transport's thread sends `room` once it has taken some, unless it did so meanwhile.
      if (!this.ring.waitForRoom()) return;
    }
    this.pending = null;
    pending.callback();
  }

  /** @internal The channel closed on the transport's side. */
  closedByPeer(): void {
    this.peerClosed = true;
    this.destroy();
  }

  private release(): void {
    const pending = this.pending;
    this.pending = null;
    pending?.callback();
  }
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
