import type { Request, Response } from 'express';
import parseRange from 'range-parser';
import type { BlobStorage } from './blob-storage';
import type { OpenBlob } from './open-blob';

export interface BlobDownload {
  key: string;
  size: number;
  /** The file name offered to the client (Content-Disposition). */
  name: string;
  /** Unix seconds, for Last-Modified; omitted when 0. */
  modifiedUnix?: number;
  /** The content opened already (its caller closes it), so that it is not opened a second time. */
  opened?: OpenBlob;
}

/**
 * Sends a stored file with Content-Length, Content-Disposition and single byte ranges (206, or 416 when
 * unsatisfiable); several ranges at once are answered with the whole file, as HTTP allows.
 */
export async function sendBlob(blobs: BlobStorage, request: Request, response: Response, blob: BlobDownload): Promise<void> {
  // Express's attachment() writes Content-Disposition (with the RFC 5987 form for non-ASCII names); the type
  // it guesses from the extension is replaced: the bytes are served as they were uploaded, never rendered.
  response.attachment(blob.name);
  response.setHeader('Content-Type', 'application/octet-stream');
  response.setHeader('Accept-Ranges', 'bytes');
  response.setHeader('Cache-Control', 'private, max-age=300');
  response.setHeader('X-Content-Type-Options', 'nosniff');
  if (blob.modifiedUnix) response.setHeader('Last-Modified', new Date(blob.modifiedUnix * 1000).toUTCString());
  let range: { start: number; end: number } | undefined;
  const header = request.headers.range;
  if (header) {
    const ranges = parseRange(blob.size, header, { combine: true });
    if (ranges === -1) {
      response.status(416).setHeader('Content-Range', `bytes */${blob.size}`);
      response.end();
      return;
    }
    if (ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1) range = ranges[0];
  }
  if (range) {
    response.status(206).setHeader('Content-Range', `bytes ${range.start}-${range.end}/${blob.size}`);
    response.setHeader('Content-Length', String(range.end - range.start + 1));
  } else {
    response.status(200).setHeader('Content-Length', String(blob.size));
  }
  if (request.method === 'HEAD' || blob.size === 0) {
    response.end();
    return;
  }
  // A client that goes away ends the transfer with an error; there is no one left to answer.
  const sent = blob.opened ? blob.opened.send(response, range) : blobs.send(blob.key, response, range);
  await sent.catch(() => response.destroy());
}
