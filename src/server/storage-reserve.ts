import * as fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as path from 'node:path';
import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { SiteConfig, StorageConfig } from '../config/slices';

/** The file that holds space back for deletions and bookkeeping, in DATA_DIR. */
export const BALLAST_FILE = 'space-reserve';
/** How often free space is measured (one statfs). */
const MEASURE_EVERY_MS = 1000;
const LOW_SPACE = 'the server is low on storage space: nothing that needs more space is accepted until space is freed; nothing was saved';

/**
 * The low-space watermark of DATA_DIR (STORAGE_RESERVE). Below it, requests that make the data grow (API writes
 * other than deletions and sign-ins, git pushes, LFS uploads) are answered 507 at the door, before anything is
 * read or written; reads, sign-ins, deletions and the server's own bookkeeping go on using the space the watermark
 * keeps back, so a disk filled by Anvil's users can always be emptied through Anvil.
 *
 * A disk filled by something else (another program, logs) leaves no such room, so half the reserve is also held
 * as a file (the ballast): when free space falls under a quarter of the reserve the ballast is removed, giving
 * deletions, the database's journal and a restart room to work; it is written again once space is back.
 */
@Injectable()
export class StorageReserve implements OnApplicationShutdown {
  private readonly logger = new Logger('StorageReserve');
  private freeBytes = Number.POSITIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private measuring: Promise<void> | null = null;

  constructor(
    private readonly storageConfig: StorageConfig,
    private readonly siteConfig: SiteConfig,
  ) {}

  /** STORAGE_RESERVE in bytes; 0 turns the watermark and the ballast off. */
  get reserveBytes(): number {
    return this.storageConfig.storageReserveBytes ?? 0;
  }

  /** Whether a write that makes the data grow must be refused now (as last measured). */
  get low(): boolean {
    return this.reserveBytes > 0 && this.freeBytes < this.reserveBytes;
  }

  /** Starts measuring (the serving process only: a CLI command holds no reserve). */
  async start(): Promise<void> {
    if (this.reserveBytes === 0 || this.timer) return;
    await this.measure();
    this.timer = setInterval(() => void this.measure(), MEASURE_EVERY_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** Measures free space now and keeps the ballast as the space allows; one measurement at a time. */
  measure(): Promise<void> {
    this.measuring ??= this.measureOnce().finally(() => (this.measuring = null));
    return this.measuring;
  }

  /**
   * The door: answers 507 for a request that would make the data grow while space is low, and lets every other
   * request through. Installed before anything reads a body.
   */
  middleware(): (request: IncomingMessage, response: ServerResponse, next: () => void) => void {
    return (request, response, next) => {
      if (!this.low || !growsData(request.method ?? 'GET', (request.url ?? '/').split('?')[0])) return next();
      const body = JSON.stringify({ message: LOW_SPACE, url: `${this.siteConfig.rootUrl}api/swagger` });
      response.writeHead(507, { 'Content-Type': 'application/json;charset=utf-8', 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
      response.end(body);
    };
  }

  /** For doors that are not HTTP requests (a push over SSH): the refusal's words, or null when there is room. */
  refusal(): string | null {
    return this.low ? LOW_SPACE : null;
  }

  private async measureOnce(): Promise<void> {
    const dataDir = this.storageConfig.dataDir;
    try {
      this.freeBytes = await freeSpace(dataDir);
      const ballast = ballastBytes(this.reserveBytes);
      if (this.freeBytes < this.reserveBytes / 4) {
        if (await removeBallast(dataDir)) {
          this.logger.warn(`DATA_DIR is almost full: the space reserve (${ballast} bytes) was released for deletions and bookkeeping`);
          this.freeBytes = await freeSpace(dataDir);
        }
      } else if (this.freeBytes >= this.reserveBytes + ballast && !(await hasBallast(dataDir))) {
        await writeBallast(dataDir, ballast);
        this.freeBytes = await freeSpace(dataDir);
      }
    } catch (error) {
      this.logger.warn(`free space under DATA_DIR could not be measured: ${(error as Error).message}`);
    }
  }
}

/**
 * Whether a request makes the data grow: API and package-registry writes other than deletions, except the few
 * that only read or sign in (markdown rendering, token creation with a password; OAuth2 endpoints are outside the
 * API); pushes over HTTP; LFS uploads (their batch request only asks where to send). Fetches never do.
 */
export function growsData(method: string, urlPath: string): boolean {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS' || method === 'DELETE') return false;
  const lower = urlPath.toLowerCase();
  if (lower.endsWith('/git-receive-pack')) return true;
  if (/\/info\/lfs\/objects\/[0-9a-f]{64}(\/\d+)?$/.test(lower)) return method === 'PUT';
  if (!lower.startsWith('/api/v1/') && !lower.startsWith('/api/packages/')) return false;
  if (lower === '/api/v1/markdown' || lower === '/api/v1/markdown/raw') return false;
  if (/^\/api\/v1\/users\/[^/]+\/tokens$/.test(lower)) return false;
  return true;
}

/** Half the reserve, held as a file; none when the reserve is off. */
export function ballastBytes(reserveBytes: number): number {
  return Math.floor(reserveBytes / 2);
}

async function freeSpace(dir: string): Promise<number> {
  const stats = await fs.promises.statfs(dir);
  return stats.bavail * stats.bsize;
}

async function hasBallast(dataDir: string): Promise<boolean> {
  return fs.promises.stat(path.join(dataDir, BALLAST_FILE)).then(
    () => true,
    () => false,
  );
}

async function removeBallast(dataDir: string): Promise<boolean> {
  try {
    await fs.promises.unlink(path.join(dataDir, BALLAST_FILE));
    return true;
  } catch {
    return false;
  }
}

/**
 * Written beside its place and renamed into it, so another instance sharing DATA_DIR never sees half a ballast;
 * real blocks (zeros written out, not a sparse file), or it would hold nothing back.
 */
async function writeBallast(dataDir: string, bytes: number): Promise<void> {
  const partial = path.join(dataDir, `${BALLAST_FILE}.${process.pid}.partial`);
  const chunk = Buffer.alloc(1024 * 1024);
  const handle = await fs.promises.open(partial, 'w', 0o600);
  try {
    for (let written = 0; written < bytes; written += chunk.length) {
      await handle.write(chunk, 0, Math.min(chunk.length, bytes - written));
    }
    await handle.sync();
    await handle.close();
    await fs.promises.rename(partial, path.join(dataDir, BALLAST_FILE));
  } catch {
    await handle.close().catch(() => undefined);
    // No room for it now: tried again at the next measurement that finds the space.
    await fs.promises.unlink(partial).catch(() => undefined);
  }
}

/**
 * At start, before anything else writes: on a disk with almost no space left, the ballast goes at once, so that
 * the database can open its journal and migrations can be checked.
 */
export function releaseBallastIfFull(dataDir: string, reserveBytes: number): void {
  if (reserveBytes === 0) return;
  try {
    const stats = fs.statfsSync(dataDir);
    if (stats.bavail * stats.bsize < reserveBytes / 4) fs.rmSync(path.join(dataDir, BALLAST_FILE), { force: true });
  } catch {
    // Measured again once the server runs.
  }
}
