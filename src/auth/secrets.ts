import { pbkdf2, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const pbkdf2Async = promisify(pbkdf2);
const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;

/**
 * The one adapter for secrets: randomness, password hashing (scrypt) and token hashing (salted PBKDF2-HMAC-SHA256,
 * 10 000 iterations, 50 bytes). All KDF work is asynchronous so that it never blocks other requests.
 */

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32, maxmem: 64 * 1024 * 1024 };

/**
 * KDFs run on libuv's thread pool (4 threads by default), which file system and DNS work share: at most
 * this many run at once, and at most KDF_QUEUE_MAX wait; beyond that the caller is told to come back (429).
 * The waiting ones are taken in turn per client (round robin over the keys they were queued under, each key's
 * own in order): a client that floods the queue waits behind itself, and another client's sign-in starts
 * after at most one derivation of each client queued before it.
 */
export const KDF_CONCURRENCY = 2;
export const KDF_QUEUE_MAX = 256;

/** The KDF queue is full. */
export class KdfBusyError extends Error {
  constructor() {
    super('too many sign-in attempts in progress, try again shortly');
  }
}

/** A concurrency limit whose waiting work is started round robin across keys. */
export class FairSlots {
  private active = 0;
  private waiting = 0;
  /** Per key, the starts of its waiting work; Map order is the round-robin order (a served key goes last). */
  private readonly queues = new Map<string, (() => void)[]>();

  constructor(
    private readonly concurrency: number,
    private readonly maxWaiting: number,
  ) {}

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    if (this.active < this.concurrency) {
      this.active++;
      return this.execute(work);
    }
    if (this.waiting >= this.maxWaiting) return Promise.reject(new KdfBusyError());
    return new Promise<T>((resolve, reject) => {
      let queue = this.queues.get(key);
      if (!queue) this.queues.set(key, (queue = []));
      queue.push(() => void this.execute(work).then(resolve, reject));
      this.waiting++;
    });
  }

  load(): { active: number; pending: number } {
    return { active: this.active, pending: this.waiting };
  }

  private async execute<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } finally {
      this.active--;
      this.startNext();
    }
  }

  private startNext(): void {
    const first = this.queues.entries().next();
    if (first.done) return;
    const [key, queue] = first.value;
    const start = queue.shift()!;
    this.waiting--;
    this.queues.delete(key);
    if (queue.length > 0) this.queues.set(key, queue);
    this.active++;
    start();
  }
}

const kdfSlots = new FairSlots(KDF_CONCURRENCY, KDF_QUEUE_MAX);

function limited<T>(work: () => Promise<T>, client = ''): Promise<T> {
  return kdfSlots.run(client, work);
}

/** KDFs queued or running now; for tests and metrics. */
export function kdfLoad(): { active: number; pending: number } {
  return kdfSlots.load();
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

/** `client` is whom the derivation is queued for (see FairSlots); one key for every caller by default. */
export async function verifyPassword(password: string, stored: string, client = ''): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, hash] = parts;
  const expected = Buffer.from(hash, 'base64');
  const actual = await limited(
    () =>
      scryptAsync(password, Buffer.from(salt, 'base64'), expected.length, {
        N: Number(n),
        r: Number(r),
        p: Number(p),
        maxmem: SCRYPT.maxmem,
      }),
    client,
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
