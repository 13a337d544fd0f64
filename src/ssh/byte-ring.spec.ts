import * as fc from 'fast-check';

interface Ring {
  shared: SharedArrayBuffer;
  size: number;
  write(chunk: Uint8Array): { count: number; wake: boolean };
  waitForRoom(): boolean;
  heard(): void;
  read(max: number): { chunk: Buffer; wakeWriter: boolean } | null;
}
// The ring is plain JavaScript, shared with the SSH transport's thread (ssh-transport.worker.js).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ByteRing } = require('./byte-ring.js') as { ByteRing: new (capacityOrShared: number | SharedArrayBuffer) => Ring };

describe('ByteRing', () => {
  it('carries every byte in order across any interleaving of writes and reads, wrapping round', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 30 }),
        fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 20 }),
        (chunks, reads) => {
          const writer = new ByteRing(32);
          const reader = new ByteRing(writer.shared);
          const sent = Buffer.concat(chunks);
          const received: Buffer[] = [];
          let pending = [...chunks];
          let turn = 0;
          while (pending.length > 0 || reader.size > 0) {
            if (pending.length > 0) {
              const { count } = writer.write(pending[0]);
              pending[0] = pending[0].subarray(count);
              if (pending[0].length === 0) pending = pending.slice(1);
            }
            const piece = reader.read(reads[turn++ % reads.length]);
            if (piece) received.push(piece.chunk);
          }
          expect(Buffer.concat(received).equals(sent)).toBe(true);
        },
      ),
    );
  });

  it('asks to wake the reader once until it has emptied the ring and said so', () => {
    const writer = new ByteRing(16);
    const reader = new ByteRing(writer.shared);
    expect(writer.write(Buffer.from('ab')).wake).toBe(true);
    expect(writer.write(Buffer.from('cd')).wake).toBe(false);
    expect(reader.read(3)?.chunk.toString()).toBe('abc');
    // Still reading: a write needs no wake.
    expect(writer.write(Buffer.from('e')).wake).toBe(false);
    expect(reader.read(16)?.chunk.toString()).toBe('de');
    expect(reader.read(16)).toBeNull();
    reader.heard();
    expect(writer.write(Buffer.from('f')).wake).toBe(true);
  });

  it('takes what fits when full, and wakes a waiting writer once the reader makes room', () => {
    const writer = new ByteRing(8);
    const reader = new ByteRing(writer.shared);
    expect(writer.write(Buffer.from('0123456789')).count).toBe(8);
    expect(writer.write(Buffer.from('89')).count).toBe(0);
    expect(writer.waitForRoom()).toBe(false);
    const piece = reader.read(2);
    expect(piece?.chunk.toString()).toBe('01');
    expect(piece?.wakeWriter).toBe(true);
    expect(writer.write(Buffer.from('89')).count).toBe(2);
    // Nobody waits now: no wake for the writer.
    expect(reader.read(1)?.wakeWriter).toBe(false);
    // Room that appeared between a full write and the wait is seen at once.
    expect(writer.write(Buffer.from('x')).count).toBe(1);
    expect(writer.write(Buffer.from('y')).count).toBe(0);
    reader.read(1);
    expect(writer.waitForRoom()).toBe(true);
  });

  it("keeps counting across the counters' wrap at 2^31 and 2^32", () => {
    for (const start of [0x7ffffff8, -8]) {
      const writer = new ByteRing(16);
      const reader = new ByteRing(writer.shared);
      new Int32Array(writer.shared, 0, 2).fill(start);
      const received: Buffer[] = [];
      for (let round = 0; round < 4; round++) {
        expect(writer.write(Buffer.from(`round-${round}!`)).count).toBe(8);
        received.push(reader.read(16)!.chunk);
      }
      expect(Buffer.concat(received).toString()).toBe('round-0!round-1!round-2!round-3!');
    }
  });

  it('refuses a capacity that is not a power of two (the counters wrap at 2^32)', () => {
    expect(() => new ByteRing(24)).toThrow(RangeError);
  });
});
