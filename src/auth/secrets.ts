import { pbkdf2, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import pLimit from 'p-limit';

const pbkdf2Async = promisify(pbkdf2);
const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;

/**
 * The one adapter for secrets: randomness, password hashing (scrypt) and token hashing (PBKDF2, as
 * behaviour 1.5 fixes). All KDF work is asynchronous so that it never blocks other requests.
 */

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32, maxmem: 64 * 1024 * 1024 };

/**
 * KDFs run on libuv's thread pool (4 threads by default), which file system and DNS work share: at most
 * this many run at once, so that a flood of wrong passwords queues behind itself instead of starving every
 * other request, and at most KDF_QUEUE_MAX wait; beyond that the caller is told to come back (429).
 */
export const KDF_CONCURRENCY = 2;
export const KDF_QUEUE_MAX = 256;
const kdfSlots = pLimit(KDF_CONCURRENCY);

/** The KDF queue is full. */
export class KdfBusyError extends Error {
  constructor() {
    super('too many sign-in attempts in progress, try again shortly');
  }
}

function limited<T>(work: () => Promise<T>): Promise<T> {
  if (kdfSlots.pendingCount >= KDF_QUEUE_MAX) return Promise.reject(new KdfBusyError());
  return kdfSlots(work);
}

/** KDFs queued or running now; for tests and metrics. */
export function kdfLoad(): { active: number; pending: number } {
  return { active: kdfSlots.activeCount, pending: kdfSlots.pendingCount };
}

/**
 * A stored hash of no one's password: verifying against it costs what verifying a real password costs, so
 * a sign-in for an unknown account takes as long as one for a known account with a wrong password.
 */
export const DECOY_PASSWORD_HASH = `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(32).toString('base64')}`;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await limited(() => scryptAsync(password, salt, SCRYPT.keylen, SCRYPT));
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, hash] = parts;
  const expected = Buffer.from(hash, 'base64');
  const actual = await limited(() =>
    scryptAsync(password, Buffer.from(salt, 'base64'), expected.length, {
      N: Number(n),
      r: Number(r),
      p: Number(p),
      maxmem: SCRYPT.maxmem,
    }),
  );
  return timingSafeEqual(actual, expected);
}

/** A new access token: 20 random bytes as 40 lowercase hex characters. */
export function generateToken(): string {
  return randomBytes(20).toString('hex');
}

export function generateSalt(): string {
  return randomBytes(10).toString('hex');
}

export async function hashToken(token: string, salt: string): Promise<string> {
  return (await limited(() => pbkdf2Async(token, salt, 10_000, 50, 'sha256'))).toString('hex');
}

export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

export const TOKEN_PATTERN = /^[0-9a-f]{40}$/;
