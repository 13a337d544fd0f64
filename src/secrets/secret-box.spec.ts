import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AppConfig } from '../config/config';
import { loadSecretKey, SecretBox, SecretUnreadableError, secretKeyFile } from './secret-box';

describe('SecretBox', () => {
  const box = (secretKey: string | null, dataDir = '/nonexistent') => new SecretBox({ secretKey, dataDir } as AppConfig);

  it('round-trips a value, never storing it in the clear, with a fresh IV each time', () => {
    const sealed = box('k1').seal('hunter2-password');
    expect(sealed).toMatch(/^v1:/);
    expect(sealed).not.toContain('hunter2');
    expect(box('k1').seal('hunter2-password')).not.toBe(sealed);
    expect(box('k1').open(sealed)).toBe('hunter2-password');
  });

  it('refuses a value sealed with another key or altered', () => {
    const sealed = box('k1').seal('secret');
    expect(() => box('k2').open(sealed)).toThrow(SecretUnreadableError);
    const raw = Buffer.from(sealed.slice(3), 'base64');
    raw[raw.length - 1] ^= 1;
    expect(() => box('k1').open(`v1:${raw.toString('base64')}`)).toThrow(SecretUnreadableError);
    expect(() => box('k1').open('garbage')).toThrow(SecretUnreadableError);
  });

  it('generates the key into DATA_DIR once, readable only by its owner, and keeps it', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-secret-'));
    try {
      const first = loadSecretKey({ secretKey: null, dataDir });
      expect(first).toMatch(/^[0-9a-f]{64}$/);
      expect(fs.statSync(secretKeyFile(dataDir)).mode & 0o777).toBe(0o600);
      expect(loadSecretKey({ secretKey: null, dataDir })).toBe(first);
      const sealed = box(null, dataDir).seal('x');
      expect(box(null, dataDir).open(sealed)).toBe('x');
      expect(box(first, dataDir).open(sealed)).toBe('x');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
