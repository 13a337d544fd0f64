import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Injectable } from '@nestjs/common';
import { StorageConfig } from '../config/slices';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The file SECRET_KEY is generated into when the setting is unset. */
export function secretKeyFile(dataDir: string): string {
  return path.join(dataDir, 'secret_key');
}

/**
 * The key of the stored secrets: SECRET_KEY, else the key in DATA_DIR/secret_key, generated there (mode 0600)
 * on first start. Created with O_EXCL, so two processes starting on a fresh DATA_DIR agree on one key.
 */
export function loadSecretKey(config: StorageConfig): string {
  if (config.secretKey !== null) return config.secretKey;
  const file = secretKeyFile(config.dataDir);
  try {
    return readKey(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return readKey(file);
}

function readKey(file: string): string {
  const key = fs.readFileSync(file, 'utf8').trim();
  if (key === '') throw new Error(`${file} is empty: remove it to generate a new key, or set SECRET_KEY`);
  return key;
}

/** A stored secret could not be decrypted: wrong SECRET_KEY, or the column was altered. */
export class SecretUnreadableError extends Error {
  constructor() {
    super('a stored secret cannot be decrypted with the current SECRET_KEY');
    this.name = 'SecretUnreadableError';
  }
}

/**
 * The one adapter for secret encryption (house style 12): AES-256-GCM from node:crypto, with a fresh 96-bit IV
 * per value and the key SHA-256(SECRET_KEY). Stored form: `v1:<base64 of iv | tag | ciphertext>`.
 */
@Injectable()
export class SecretBox {
  private key: Buffer | null = null;

  constructor(private readonly storageConfig: StorageConfig) {}

  seal(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.secretKey(), iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  open(sealed: string): string {
    const [version, payload] = sealed.split(':', 2);
    if (version !== VERSION || !payload) throw new SecretUnreadableError();
    const raw = Buffer.from(payload, 'base64');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new SecretUnreadableError();
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.secretKey(), raw.subarray(0, IV_BYTES));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretUnreadableError();
    }
  }

  /** A key for one purpose, the same in every instance that shares SECRET_KEY: HMAC-SHA-256(key, purpose). */
  derive(purpose: string): string {
    return createHmac('sha256', this.secretKey()).update(purpose, 'utf8').digest('base64url');
  }

  private secretKey(): Buffer {
    this.key ??= createHash('sha256').update(loadSecretKey(this.storageConfig), 'utf8').digest();
    return this.key;
  }
}
