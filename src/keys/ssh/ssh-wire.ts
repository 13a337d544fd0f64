/**
 * Reads the SSH wire encoding (RFC 4251 §5) of a public-key blob: length-prefixed strings and fixed-size
 * integers. Used to frame key blobs strictly (exact field count, no trailing bytes) before a library parses
 * the key material.
 */
export class SshWireError extends Error {}

export class SshWireReader {
  private position = 0;

  constructor(private readonly buffer: Buffer) {}

  /** A length-prefixed string, raw bytes. */
  string(): Buffer {
    const length = this.uint32();
    if (length > this.buffer.length - this.position) throw new SshWireError('truncated data');
    const value = this.buffer.subarray(this.position, this.position + length);
    this.position += length;
    return value;
  }

  uint32(): number {
    this.need(4);
    const value = this.buffer.readUInt32BE(this.position);
    this.position += 4;
    return value;
  }

  uint64(): bigint {
    this.need(8);
    const value = this.buffer.readBigUInt64BE(this.position);
    this.position += 8;
    return value;
  }

  end(): void {
    if (this.position !== this.buffer.length) throw new SshWireError('trailing junk in public key');
  }

  private need(bytes: number): void {
    if (this.buffer.length - this.position < bytes) throw new SshWireError('truncated data');
  }
}

/** Encodes byte strings as SSH wire strings and concatenates them. */
export function sshStrings(...values: (Buffer | string)[]): Buffer {
  return Buffer.concat(
    values.flatMap((value) => {
      const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
      const length = Buffer.alloc(4);
      length.writeUInt32BE(bytes.length);
      return [length, bytes];
    }),
  );
}
