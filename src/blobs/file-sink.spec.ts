import { createHash, randomBytes } from 'node:crypto';
// fsCallbacks: the module object itself, whose functions the sink calls through it, so that a spy sees them.
import fsCallbacks, * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PayloadTooLargeError } from '../common/errors';
import { FileSink } from './file-sink';

/**
 * Descriptors this process holds open on files under `dir`: only the sink's own, whatever else the test
 * worker opens or closes meanwhile (pipes of an earlier spec's child processes, its IPC).
 */
function openDescriptors(dir: string): number {
  let count = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir + path.sep)) count += 1;
    } catch {
      // Closed between the listing and the read.
    }
  }
  return count;
}

/** `count` chunks of `size` random bytes, given one at a time as a socket would. */
function chunks(count: number, size: number): Buffer[] {
  return Array.from({ length: count }, () => randomBytes(size));
}

describe('FileSink', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'file-sink-'));
  });
  afterEach(() => {
    jest.restoreAllMocks();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('writes every byte in order, counts and hashes them, and closes the file', async () => {
    const parts = chunks(40, 64 * 1024 + 7);
    const content = Buffer.concat(parts);
    const file = path.join(dir, 'a');
    const hash = createHash('sha256');
    const before = openDescriptors(dir);
    const sink = new FileSink(file, { maxBytes: content.length, hashes: [hash], durable: false });
    await pipeline(Readable.from(parts), sink);
    expect(sink.size).toBe(content.length);
    expect(Buffer.compare(fs.readFileSync(file), content)).toBe(0);
    expect(hash.digest('hex')).toBe(createHash('sha256').update(content).digest('hex'));
    expect(openDescriptors(dir)).toBe(before);
  });

  it('flushes a durable file in steps while it is written, one at a time, then once more at the end', async () => {
    const realDatasync = fsCallbacks.fdatasync;
    const events: string[] = [];
    let active = 0;
    jest.spyOn(fsCallbacks, 'fdatasync').mockImplementation(((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
      events.push(active === 0 ? 'step' : 'overlapping step');
      active += 1;
      realDatasync(fd, (error) => {
        active -= 1;
        callback(error);
      });
    }) as typeof fsCallbacks.fdatasync);
    const realFsync = fsCallbacks.fsync;
    jest.spyOn(fsCallbacks, 'fsync').mockImplementation(((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
      events.push(active === 0 ? 'final' : 'final during a step');
      realFsync(fd, callback);
    }) as typeof fsCallbacks.fsync);
    const file = path.join(dir, 'durable');
    await pipeline(Readable.from(chunks(64, 16 * 1024)), new FileSink(file, { maxBytes: 1 << 30, hashes: [], durable: true, syncStepBytes: 128 * 1024 }));
    // 1 MiB in steps of 128 KiB: however fast the disk, at least one step before the end.
    expect(events.length).toBeGreaterThanOrEqual(2);
    expect(events).toEqual([...events.slice(0, -1).map(() => 'step'), 'final']);
    expect(fs.statSync(file).size).toBe(1024 * 1024);
  });

  it('neither steps nor flushes a file that need not be durable', async () => {
    const datasync = jest.spyOn(fsCallbacks, 'fdatasync');
    const flush = jest.spyOn(fsCallbacks, 'fsync');
    await pipeline(
      Readable.from(chunks(64, 16 * 1024)),
      new FileSink(path.join(dir, 'plain'), { maxBytes: 1 << 30, hashes: [], durable: false, syncStepBytes: 1024 }),
    );
    expect(datasync).not.toHaveBeenCalled();
    expect(flush).not.toHaveBeenCalled();
  });

  it('fails with PayloadTooLargeError past maxBytes, having written no byte beyond it', async () => {
    const file = path.join(dir, 'large');
    const before = openDescriptors(dir);
    const sink = new FileSink(file, { maxBytes: 100_000, hashes: [], durable: true });
    await expect(pipeline(Readable.from(chunks(4, 40_000)), sink)).rejects.toBeInstanceOf(PayloadTooLargeError);
    expect(fs.statSync(file).size).toBeLessThanOrEqual(100_000);
    expect(openDescriptors(dir)).toBe(before);
  });

  it('fails when the source is cut off, and closes its file only after the flush in flight', async () => {
    const file = path.join(dir, 'cut');
    const before = openDescriptors(dir);
    let release: () => void = () => undefined;
    const stepStarted = new Promise<void>((started) => {
      jest.spyOn(fsCallbacks, 'fdatasync').mockImplementation(((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
        release = () => callback(null);
        started();
      }) as typeof fsCallbacks.fdatasync);
    });
    const source = new PassThrough();
    const sink = new FileSink(file, { maxBytes: 1 << 30, hashes: [], durable: true, syncStepBytes: 1 });
    const receiving = pipeline(source, sink);
    source.write(randomBytes(64 * 1024));
    await stepStarted;
    source.destroy(new Error('the request was cut off'));
    await expect(receiving).rejects.toThrow('the request was cut off');
    await new Promise((resolve) => setImmediate(resolve));
    expect(openDescriptors(dir)).toBe(before + 1);
    release();
    if (!sink.closed) await new Promise((resolve) => sink.once('close', resolve));
    expect(openDescriptors(dir)).toBe(before);
  });

  it('never replaces a file that exists', async () => {
    const file = path.join(dir, 'taken');
    fs.writeFileSync(file, 'kept');
    await expect(pipeline(Readable.from([Buffer.from('new')]), new FileSink(file, { maxBytes: 10, hashes: [], durable: false }))).rejects.toMatchObject({
      code: 'EEXIST',
    });
    expect(fs.readFileSync(file, 'utf8')).toBe('kept');
  });
});
