import { OID_PATTERN } from './lfs-content';
import type { LfsPointer } from './lfs.wire';

/** A pointer file is at most this long: a larger blob is never one. */
export const MAX_POINTER_BYTES = 1024;

const VERSION_LINE = 'version https://git-lfs.github.com/spec/v1';

/**
 * The object a pointer file names (`version …`, `oid sha256:<64 hex>`, `size <n>` on its first three lines),
 * or null when the bytes are not a pointer. Read as Forgejo reads it: the first line only needs to begin with
 * the version, and the lines after the size are not looked at.
 */
export function parsePointerFile(bytes: Buffer): LfsPointer | null {
  if (bytes.length > MAX_POINTER_BYTES) return null;
  const text = bytes.toString('utf8');
  if (!text.startsWith(VERSION_LINE)) return null;
  const lines = text.split('\n');
  if (lines.length < 3) return null;
  const oid = lines[1].startsWith('oid sha256:') ? lines[1].slice('oid sha256:'.length) : '';
  if (!OID_PATTERN.test(oid)) return null;
  const size = /^size (\d{1,15})$/.exec(lines[2]);
  if (!size) return null;
  return { oid, size: Number(size[1]) };
}

/** The pointer file git-lfs writes for an object. */
export function pointerFile(pointer: LfsPointer): string {
  return `${VERSION_LINE}\noid sha256:${pointer.oid}\nsize ${pointer.size}\n`;
}
