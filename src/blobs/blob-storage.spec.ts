import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import type { AppConfig } from '../config/config';
import { BlobStorage } from './blob-storage';

/**
 * A sink that, like a socket, reads each chunk only later and then calls back: it copies the chunk just before
 * its callback, so a buffer that the store refilled before the callback would show as corrupt content.
 */
class Collector extends Writable {
  readonly chunks: Buffer[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    setImmediate(() => {
      this.chunks.push(Buffer.from(chunk));
      callback();
    });
  }
  get bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

describe('BlobStorage.send', () => {
  let dir: string;
  let store: BlobStorage;
  const content = randomBytes(1024 * 1024 + 12345);
  const key = 'attachments/a/b/ab-send';

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blob-store-'));
    store = new BlobStorage({ dataDir: dir } as AppConfig);
    const staged = await store.receive(Readable.from([content]), content.length + 1);
    await staged.park(key);
    await staged.commit();
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('writes the whole file byte-identical through its reused buffers, then ends the target', async () => {
    const sink = new Collector();
    await store.send(key, sink);
    expect(Buffer.compare(sink.bytes, content)).toBe(0);
    expect(sink.writableEnded).toBe(true);
    // Several steps, so buffer reuse was exercised: a reused buffer overwritten too early would corrupt the copy.
    expect(sink.chunks.length).toBeGreaterThan(3);
  });

  it('writes one byte range inclusive of both ends', async () => {
    const sink = new Collector();
    await store.send(key, sink, { start: 300_000, end: 700_000 });
    expect(Buffer.compare(sink.bytes, content.subarray(300_000, 700_001))).toBe(0);
  });

  it('rejects when the target closes early, without waiting for writes that will never be taken', async () => {
    // A target that takes the first write, then never calls back again and is destroyed (a client gone away).
    let writes = 0;
    const stuck = new Writable({
      write(_chunk, _encoding, callback) {
        writes += 1;
        if (writes === 1) callback();
        else setImmediate(() => stuck.destroy());
      },
    });
    await expect(store.send(key, stuck)).rejects.toThrow();
    expect(writes).toBeLessThanOrEqual(3);
  });

  it('follows the pace of a slow reader: at most two steps are waiting in the target at once', async () => {
    const pass = new PassThrough({ highWaterMark: 1 });
    let maxBuffered = 0;
    const sending = store.send(key, pass);
    const received: Buffer[] = [];
    for await (const chunk of pass) {
      maxBuffered = Math.max(maxBuffered, pass.readableLength + pass.writableLength);
      received.push(Buffer.from(chunk as Buffer));
    }
    await sending;
    expect(Buffer.compare(Buffer.concat(received), content)).toBe(0);
    expect(maxBuffered).toBeLessThanOrEqual(2 * 256 * 1024);
  });
});

describe('BlobStorage scratch space shared by several instances on one DATA_DIR', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blob-scratch-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("another instance's start-up leaves an upload in flight alone, and the upload completes", async () => {
    const first = new BlobStorage({ dataDir: dir } as AppConfig);
    const second = new BlobStorage({ dataDir: dir } as AppConfig);
    const source = new PassThrough();
    const receiving = first.receive(source, 1024 * 1024);
    source.write(Buffer.alloc(4096, 1));
    // The file exists under the first instance's scratch directory before the second starts.
    await new Promise((resolve) => setImmediate(resolve));
    await second.clearTemporary();
    source.end(Buffer.alloc(4096, 2));
    const staged = await receiving;
    expect(staged.size).toBe(8192);
    await staged.park('attachments/a/b/ab-live');
    await staged.commit();
    expect(await first.size('attachments/a/b/ab-live')).toBe(8192);
  });

  it('start-up removes scratch directories and files nobody wrote to for an hour, and only those', async () => {
    const scratch = path.join(dir, 'tmp', 'uploads');
    const stale = path.join(scratch, 'dead-instance');
    const fresh = path.join(scratch, 'live-instance');
    for (const each of [stale, fresh]) {
      fs.mkdirSync(each, { recursive: true });
      fs.writeFileSync(path.join(each, 'part'), 'x');
    }
    fs.writeFileSync(path.join(scratch, 'old-layout-file'), 'x');
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    for (const each of [stale, path.join(stale, 'part'), path.join(scratch, 'old-layout-file')]) fs.utimesSync(each, twoHoursAgo, twoHoursAgo);
    await new BlobStorage({ dataDir: dir } as AppConfig).clearTemporary();
    expect(fs.readdirSync(scratch)).toEqual(['live-instance']);
  });
});

describe('BlobStorage parking', () => {
  let dir: string;
  let store: BlobStorage;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blob-store-'));
    store = new BlobStorage({ dataDir: dir } as AppConfig);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('keeps a parked file out of its key until commit, and lists it with its key meanwhile', async () => {
    const key = 'packages/a/b/ab-parked';
    const staged = await store.receive(Readable.from([Buffer.from('parked')]), 100);
    await staged.park(key);
    expect(await store.size(key)).toBeNull();
    const pending = await store.pendingBlobs();
    expect(pending.map((blob) => blob.key)).toEqual([key]);
    await staged.commit();
    expect(await store.size(key)).toBe(6);
    expect(await store.pendingBlobs()).toEqual([]);
    expect((await store.storedBlobs('packages')).map((blob) => blob.key)).toEqual([key]);
  });

  it('commits without error when another process finished the move first, and fails when the file is lost', async () => {
    const key = 'attachments/c/d/cd-finished';
    const staged = await store.receive(Readable.from([Buffer.from('x')]), 100);
    await staged.park(key);
    const [pending] = await store.pendingBlobs();
    await store.finish(pending.file, pending.key);
    await expect(staged.commit()).resolves.toBeUndefined();
    const lost = await store.receive(Readable.from([Buffer.from('y')]), 100);
    await lost.park('attachments/e/f/ef-lost');
    const [gone] = await store.pendingBlobs();
    fs.rmSync(gone.file);
    await expect(lost.commit()).rejects.toThrow();
  });
});
