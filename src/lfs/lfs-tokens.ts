import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Injectable } from '@nestjs/common';
import { Clock } from '../common/time';
import { LfsConfig, StorageConfig } from '../config/slices';
import type { LfsOperation } from './lfs.service';

/** What a token from `git-lfs-authenticate` lets its bearer do: one operation on one repository, as one user. */
export interface LfsTokenClaims {
  userId: number;
  repositoryId: number;
  operation: LfsOperation;
}

/** The file of DATA_DIR that LFS_JWT_SECRET is generated into when the setting is unset. */
export const LFS_JWT_SECRET_FILE = 'lfs_jwt_secret';

export function lfsJwtSecretFile(dataDir: string): string {
  return path.join(dataDir, LFS_JWT_SECRET_FILE);
}

const HEADER = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

/**
 * Short-lived bearer tokens for LFS over HTTP, handed out over SSH: HS256 JWTs (as Forgejo's, with its claim
 * names) under LFS_JWT_SECRET, else a key generated once into DATA_DIR/lfs_jwt_secret (mode 0600, created with
 * O_EXCL so that instances starting together on one DATA_DIR agree on it). The key never leaves the process.
 */
@Injectable()
export class LfsTokens {
  private key: Buffer | null = null;

  constructor(
    private readonly lfsConfig: LfsConfig,
    private readonly storageConfig: StorageConfig,
    private readonly clock: Clock,
  ) {}

  /** A token valid for LFS_HTTP_AUTH_EXPIRY, and that lifetime in seconds. */
  issue(claims: LfsTokenClaims): { token: string; expiresIn: number } {
    const now = this.clock.nowUnix();
    const expiresIn = this.lfsConfig.httpAuthExpirySeconds;
    const payload = base64url(JSON.stringify({ RepoID: claims.repositoryId, Op: claims.operation, UserID: claims.userId, exp: now + expiresIn, nbf: now }));
    const unsigned = `${HEADER}.${payload}`;
    return { token: `${unsigned}.${this.sign(unsigned)}`, expiresIn };
  }

  /** The claims of a token signed with the key, of algorithm HS256 and within its lifetime; null otherwise. */
  verify(token: string): LfsTokenClaims | null {
    const parts = token.split('.');
    if (parts.length !== 3) return null;
    const [header, payload, signature] = parts;
    const expected = Buffer.from(this.sign(`${header}.${payload}`));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    try {
      const head = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { alg?: unknown };
      if (head.alg !== 'HS256') return null;
      const body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
      const now = this.clock.nowUnix();
      if (typeof body.exp !== 'number' || body.exp <= now) return null;
      if (typeof body.nbf === 'number' && body.nbf > now + 60) return null;
      if (!Number.isSafeInteger(body.RepoID) || !Number.isSafeInteger(body.UserID)) return null;
      if (body.Op !== 'upload' && body.Op !== 'download') return null;
      return { userId: body.UserID as number, repositoryId: body.RepoID as number, operation: body.Op };
    } catch {
      return null;
    }
  }

  private sign(unsigned: string): string {
    return createHmac('sha256', this.secret()).update(unsigned).digest('base64url');
  }

  private secret(): Buffer {
    this.key ??= loadKey(this.lfsConfig.jwtSecret, this.storageConfig.dataDir);
    return this.key;
  }
}

/** Forgejo's LFS_JWT_SECRET is 32 bytes in unpadded base64url; any other value is used as its bytes. */
function loadKey(configured: string | null, dataDir: string): Buffer {
  const text = configured ?? readOrCreate(lfsJwtSecretFile(dataDir), dataDir);
  if (/^[A-Za-z0-9_-]{43}$/.test(text)) return Buffer.from(text, 'base64url');
  return Buffer.from(text, 'utf8');
}

function readOrCreate(file: string, dataDir: string): string {
  try {
    return readKey(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return readKey(file);
}

function readKey(file: string): string {
  const key = fs.readFileSync(file, 'utf8').trim();
  if (key === '') throw new Error(`${file} is empty: remove it to generate a new key, or set LFS_JWT_SECRET`);
  return key;
}

function base64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}
