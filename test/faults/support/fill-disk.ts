import * as fs from 'node:fs';

/**
 * Writes `file` until the file system under it has no byte left (ENOSPC), in ever smaller pieces: from
 * `firstPiece` bytes, halved each time the disk refuses one, down to 512. `flags` 'a' adds to a filler already
 * there, 'w' starts it again.
 */
export function fillToTheBrim(file: string, options: { flags: 'w' | 'a'; firstPiece: number; byte: number }): void {
  const descriptor = fs.openSync(file, options.flags);
  try {
    for (let size = options.firstPiece; size >= 512; size = Math.floor(size / 2)) {
      const piece = Buffer.alloc(size, options.byte);
      for (;;) {
        try {
          fs.writeSync(descriptor, piece);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw error;
        }
      }
    }
  } finally {
    fs.closeSync(descriptor);
  }
}
