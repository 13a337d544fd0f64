import { MAX_POINTER_BYTES, parsePointerFile, pointerFile } from './lfs-pointer';

describe('parsePointerFile', () => {
  const oid = 'a'.repeat(64);

  it('reads the pointer git-lfs writes, and answers null for other bytes', () => {
    expect(parsePointerFile(Buffer.from(pointerFile({ oid, size: 12 })))).toEqual({ oid, size: 12 });
    expect(parsePointerFile(Buffer.from(`version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize 0`))).toEqual({ oid, size: 0 });
    expect(parsePointerFile(Buffer.from('hello\n'))).toBeNull();
    expect(parsePointerFile(Buffer.from(`version https://git-lfs.github.com/spec/v1\noid sha256:${oid.toUpperCase()}\nsize 1\n`))).toBeNull();
    expect(parsePointerFile(Buffer.from(`version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize -1\n`))).toBeNull();
    expect(parsePointerFile(Buffer.from(`version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\n`))).toBeNull();
    expect(parsePointerFile(Buffer.concat([Buffer.from(pointerFile({ oid, size: 1 })), Buffer.alloc(MAX_POINTER_BYTES)]))).toBeNull();
  });
});
