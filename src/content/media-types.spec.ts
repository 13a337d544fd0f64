import { sniffContentType } from './media-types';

describe('content type of raw files', () => {
  it('serves text as UTF-8 plain text, never as HTML', () => {
    expect(sniffContentType(Buffer.from('hello ünïcode\n'))).toBe('text/plain; charset=utf-8');
    expect(sniffContentType(Buffer.from('<html><script>alert(1)</script></html>'))).toBe('text/plain; charset=utf-8');
    expect(sniffContentType(Buffer.alloc(0))).toBe('text/plain; charset=utf-8');
  });

  it('recognises images and PDF by magic number, SVG by its root element', () => {
    expect(sniffContentType(Buffer.from('89504e470d0a1a0a0000', 'hex'))).toBe('image/png');
    expect(sniffContentType(Buffer.from('ffd8ffe000104a464946', 'hex'))).toBe('image/jpeg');
    expect(sniffContentType(Buffer.from('%PDF-1.7\n'))).toBe('application/pdf');
    expect(sniffContentType(Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"></svg>'))).toBe('image/svg+xml');
  });

  it('answers other binary data as application/octet-stream', () => {
    expect(sniffContentType(Buffer.from([0x00, 0x01, 0x02, 0xff]))).toBe('application/octet-stream');
    expect(sniffContentType(Buffer.from([0xc3, 0x28, 0x41, 0x41, 0x41, 0x41]))).toBe('application/octet-stream');
  });
});
