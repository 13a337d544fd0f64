/** Content types by magic number, for the kinds Forgejo serves as themselves (images, PDF, audio, video). */
const SIGNATURES: [string, (bytes: Buffer) => boolean][] = [
  ['image/png', (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))],
  ['image/jpeg', (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
  ['image/gif', (b) => b.subarray(0, 6).toString('latin1') === 'GIF87a' || b.subarray(0, 6).toString('latin1') === 'GIF89a'],
  ['image/webp', (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP'],
  ['image/bmp', (b) => b.subarray(0, 2).toString('latin1') === 'BM'],
  ['application/pdf', (b) => b.subarray(0, 5).toString('latin1') === '%PDF-'],
  ['audio/mpeg', (b) => b.subarray(0, 3).toString('latin1') === 'ID3'],
  ['video/mp4', (b) => b.subarray(4, 8).toString('latin1') === 'ftyp'],
];

/** Text: no NUL byte and valid UTF-8 in the first bytes (a multi-byte character cut at the end is allowed). */
function looksLikeText(bytes: Buffer): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, Math.max(0, bytes.length - 3)));
    return true;
  } catch {
    return false;
  }
}

/**
 * What /raw and /media answer as Content-Type, from the first bytes of a file (Forgejo's typesniffer): known
 * binary media as themselves, SVG as `image/svg+xml` (sent with a sandboxing CSP), other text as UTF-8 plain
 * text, everything else `application/octet-stream`. Text is never served as HTML.
 */
export function sniffContentType(head: Buffer): string {
  for (const [type, test] of SIGNATURES) if (test(head)) return type;
  if (looksLikeText(head)) {
    if (/^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!doctype svg[^>]*>\s*)?<svg[\s>]/i.test(head.toString('utf8'))) return 'image/svg+xml';
    return 'text/plain; charset=utf-8';
  }
  return 'application/octet-stream';
}
