import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import type { GitStream } from '../git/git-command';
import { TransferWatch } from '../git/transfer-watch';

// Why: raw files, archives and the diffs of pull requests leave the server the same way: git's output streamed
// to the client as it comes, never held whole, with git stopped when the client goes away.

/** A response: status, headers, and the bytes (a stream, a small file read whole, or null for 304). */
export interface Download {
  status: number;
  headers: Record<string, string>;
  body: Readable | Buffer | null;
}

/** Hands a download to the transport; resolves once the last byte is written or the reader went away. */
export type Deliver = (download: Download) => Promise<void>;

/**
 * Streams a download to the HTTP response; a client that goes away ends it (and git with it), and so does one
 * that reads slower than the minimum transfer rate (GIT_MIN_TRANSFER_RATE): a reader that stops must not
 * keep git and its slot.
 */
export function deliverTo(response: Response, rate: { minRate: number; windowMs: number }): Deliver {
  return async (download) => {
    response.status(download.status);
    for (const [name, value] of Object.entries(download.headers)) response.setHeader(name, value);
    if (!download.body || Buffer.isBuffer(download.body)) {
      // Nothing, or a small file already in memory: one write, no stream machinery.
      response.end(download.body ?? undefined);
      return;
    }
    const watch = new TransferWatch({ ...rate, waitingOnPeer: () => response.writableNeedDrain, onStall: () => response.destroy() });
    const body = download.body;
    body.on('data', (chunk: Buffer) => watch.count(chunk.length));
    try {
      await pipeline(body, response);
    } catch {
      // The client went away, or git failed part-way: the response is cut, never ended as if complete.
      response.destroy();
    } finally {
      watch.stop();
    }
  };
}

/**
 * Answers 200 with `headers` and git's whole output. Nothing is answered before git wrote its first byte or
 * exited, so a git that fails at once is an error status (its GitError), not an empty 200; a failure later cuts
 * the response. Git is stopped once the answer ends, whether the client read it all or went away.
 */
export async function deliverGitOutput(stream: GitStream, headers: Record<string, string>, deliver: Deliver): Promise<void> {
  try {
    const { head, body } = await sniffable(stream, 1);
    if (head.length === 0) await stream.exited;
    await deliverStream(stream, { status: 200, headers, body }, deliver);
  } finally {
    stream.kill();
    await stream.exited.catch(() => undefined);
  }
}

/** Delivers a download whose body is git's output, then stops git (a reader that went away leaves it blocked). */
export async function deliverStream(stream: GitStream, download: Download, deliver: Deliver): Promise<void> {
  try {
    await deliver(download);
  } finally {
    // A reader that went away leaves git blocked on a full pipe: stop it rather than wait for the time limit.
    stream.kill();
    await stream.exited.catch(() => undefined);
  }
}

/**
 * Reads the first bytes for sniffing and hands back a stream that still yields every byte, and that fails
 * (so that the response is aborted, never ended as if complete) when git exits with an error after all.
 */
export async function sniffable(stream: GitStream, wanted: number): Promise<{ head: Buffer; body: Readable }> {
  const iterator = stream.stdout[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const first: Buffer[] = [];
  let size = 0;
  let done = false;
  while (size < wanted) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    first.push(next.value);
    size += next.value.length;
  }
  const head = Buffer.concat(first);
  const body = Readable.from(
    (async function* () {
      if (head.length > 0) yield head;
      for (;;) {
        if (done) break;
        const next = await iterator.next();
        if (next.done) break;
        yield next.value;
      }
      await stream.exited;
    })(),
  );
  return { head: head.subarray(0, wanted), body };
}
