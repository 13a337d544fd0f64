import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { inflateSync } from 'node:zlib';
import type { BatchObject } from './git-batch-reader';

/** Most loose objects one reader reads; past it the caller asks git. */
const MAX_OBJECTS = 512;
/** Largest loose file read (compressed), and most bytes all its objects may hold once inflated. */
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_INFLATED_BYTES = 8 * 1024 * 1024;
/** Largest packed-refs file searched for a ref. */
const MAX_PACKED_REFS_BYTES = 1024 * 1024;

const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * The loose objects of one object directory (a push's quarantine, where git unpacks a small push), read without
 * starting git: each is a zlib stream of `<type> <size>\0<content>` at `xx/yyyy…`. `read` answers null for an
 * object that is not there as a loose file, for one that is not what its header says, and once the reader's
 * budget of objects or bytes is spent: the caller then asks git, which also reads packs and alternates.
 */
export class LooseObjects {
  private objects = 0;
  private inflated = 0;

  constructor(private readonly directory: string) {}

  async read(id: string): Promise<BatchObject | null> {
    if (!OBJECT_ID.test(id) || this.objects >= MAX_OBJECTS) return null;
    this.objects += 1;
    let file: Buffer;
    try {
      const handle = await fs.open(path.join(this.directory, id.slice(0, 2), id.slice(2)), 'r');
      try {
        const { size } = await handle.stat();
        if (size > MAX_FILE_BYTES) return null;
        file = await handle.readFile();
      } finally {
        await handle.close();
      }
    } catch {
      return null;
    }
    let raw: Buffer;
    try {
      raw = inflateSync(file, { maxOutputLength: MAX_INFLATED_BYTES - this.inflated });
    } catch {
      return null;
    }
    this.inflated += raw.length;
    const nul = raw.indexOf(0);
    const header = nul > 0 ? /^(blob|tree|commit|tag) (\d+)$/.exec(raw.toString('latin1', 0, nul)) : null;
    if (!header || Number(header[2]) !== raw.length - nul - 1) return null;
    return { oid: id, type: header[1], size: Number(header[2]), content: raw.subarray(nul + 1) };
  }
}

/**
 * The object id a repository's ref has now, read as git stores it (a loose file under `refs/`, else a line of
 * `packed-refs`), or null when it cannot be told that way (a symbolic ref, a name git would not write, a large
 * packed-refs file): the caller then asks git.
 */
export async function refValue(gitDir: string, ref: string): Promise<string | null> {
  if (!/^refs\/[\x21-\x7e]+$/.test(ref) || ref.split('/').some((part) => part === '' || part.startsWith('.') || part.endsWith('.lock'))) return null;
  try {
    const value = (await fs.readFile(path.join(gitDir, ref), 'latin1')).trim();
    return OBJECT_ID.test(value) ? value : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return null;
  }
  try {
    const file = path.join(gitDir, 'packed-refs');
    if ((await fs.stat(file)).size > MAX_PACKED_REFS_BYTES) return null;
    for (const line of (await fs.readFile(file, 'latin1')).split('\n')) {
      const space = line.indexOf(' ');
      if (space > 0 && line.slice(space + 1) === ref) return OBJECT_ID.test(line.slice(0, space)) ? line.slice(0, space) : null;
    }
  } catch {
    return null;
  }
  return null;
}

/** The tree a commit's content names, or null. */
export function commitTree(commit: Buffer): string | null {
  const match = /^tree ([0-9a-f]{40}|[0-9a-f]{64})\n/.exec(commit.toString('latin1', 0, 80));
  return match ? match[1] : null;
}
