import * as http from 'node:http';
import * as https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { InvalidInputError } from '../common/errors';
import { MirrorConfig } from '../config/slices';
import { GitRemotes, RemoteCredentials } from '../git/git-remotes';
import { LfsIntake } from '../lfs/lfs-intake';
import type { LfsPointer } from '../lfs/lfs.wire';
import { HostPolicy, VettedSource } from '../outbound/host-policy';
import type { QuotaReservation } from '../quota/quota-gate';

const LFS_MEDIA_TYPE = 'application/vnd.git-lfs+json';
/** Objects named in one batch request to the source. */
const BATCH_SIZE = 100;
/** A batch answer is refused beyond this many bytes. */
const MAX_BATCH_ANSWER_BYTES = 4 * 1024 * 1024;
/** A connection that sends nothing for this long is given up. */
const IDLE_MS = 60_000;

/**
 * The LFS endpoint of a migration's source: `lfs_endpoint` when given, else the clone address with `.git` and
 * `/info/lfs` after it, as git-lfs derives it.
 */
export function lfsEndpointOf(cloneUrl: URL, endpoint: string | undefined): URL {
  if (endpoint) {
    // Kept with a mirror in a column of this size.
    if (endpoint.length > 2048) throw new InvalidInputError('Invalid LFS endpoint');
    try {
      const url = new URL(endpoint);
      if (url.protocol === 'http:' || url.protocol === 'https:') return url;
    } catch {
      // Refused below.
    }
    throw new InvalidInputError('Invalid LFS endpoint');
  }
  const url = new URL(cloneUrl.href);
  url.username = '';
  url.password = '';
  const trimmed = url.pathname.replace(/\/+$/, '');
  url.pathname = `${trimmed.endsWith('.git') ? trimmed : `${trimmed}.git`}/info/lfs`;
  return url;
}

/** What to fetch the LFS objects of, and from where. */
export interface LfsFetchRequest {
  /** The repository's git directory: its pointer files name the objects. */
  dir: string;
  endpoint: URL;
  credentials: RemoteCredentials | undefined;
  owner: { id: number; name: string };
  /** An existing repository (a mirror's sync): the objects it holds are not fetched again. */
  repositoryId?: number;
  /** Ends the fetch early (the server stops, the client went away); the objects stored by then are kept. */
  signal?: AbortSignal;
  /** For log lines: `migration` or `mirror alice/tool`. */
  what: string;
}

/**
 * The objects a fetch stored, to be linked to the repository with `link` in the transaction that records it
 * (which also settles their quota reservation); `release` when done, linked or not.
 */
export interface LfsFetched {
  pointers: LfsPointer[];
  /** Objects left for later: beyond MIRROR_LFS_MAX_OBJECTS or MIRROR_LFS_MAX_SIZE, or not reached in time. */
  deferred: number;
  link(tx: EntityManager, repositoryId: number): Promise<void>;
  release(): Promise<void>;
}

/**
 * Brings a repository's LFS objects from the LFS server its source names (batch API, basic transfer), for a
 * migration with `lfs: true` and every sync of such a pull mirror, as Forgejo's StoreMissingLfsObjectsInRepository
 * does. The limits are applied before anything is fetched: objects above LFS_MAX_FILE_SIZE are left out (as
 * Forgejo leaves them); of the rest, at most MIRROR_LFS_MAX_OBJECTS and MIRROR_LFS_MAX_SIZE per run, whose bytes
 * must fit in the owner's `size:git:lfs` and are reserved there; the whole run stops after MIRROR_LFS_TIMEOUT.
 * Every host asked (the batch server and every download link) passes the outbound host policy and is
 * connected to at exactly the addresses it vetted; redirects are not followed. Each object streams into the
 * LFS store verified against its oid and size; one that does not match, or that the source does not offer, is
 * left out and logged, and the others are fetched.
 */
@Injectable()
export class LfsFetch {
  private readonly logger = new Logger('LfsFetch');

  constructor(
    private readonly policy: HostPolicy,
    private readonly intake: LfsIntake,
    private readonly remotes: GitRemotes,
    private readonly mirrorConfig: MirrorConfig,
  ) {}

  /**
   * Every object is fetched, even one stored already for another repository: a pointer is only text the
   * source's owner wrote, and only the bytes prove that the source has the object (otherwise a pointer naming
   * another user's private object would link it). A mirror's sync skips only what the mirror holds itself.
   */
  async fetch(request: LfsFetchRequest): Promise<LfsFetched> {
    const wanted = await this.wanted(request);
    if (wanted.pointers.length === 0) return { pointers: [], deferred: wanted.deferred, link: () => Promise.resolve(), release: () => Promise.resolve() };
    const reservation = await this.intake.reserve(request.owner, wanted.pointers);
    try {
      const { fetched, unreached } = await this.download(request, wanted.pointers);
      return {
        pointers: fetched,
        deferred: wanted.deferred + unreached,
        link: async (tx, repositoryId) => {
          await this.intake.link(tx, repositoryId, fetched);
          await reservation.settle(tx);
        },
        release: () => reservation.release(),
      };
    } catch (error) {
      await reservation.release();
      throw error;
    }
  }

  /** The pointers to fetch in this run, in the order git lists them, and how many are left for a later one. */
  private async wanted(request: LfsFetchRequest): Promise<{ pointers: LfsPointer[]; deferred: number }> {
    const pointers = new Map<string, LfsPointer>();
    await this.remotes.smallBlobs(
      request.dir,
      this.intake.maxPointerBytes,
      async (blobs) => {
        for (const pointer of this.intake.pointersIn(blobs)) pointers.set(pointer.oid, pointer);
      },
      { reachable: request.repositoryId !== undefined },
    );
    let candidates = [...pointers.values()];
    if (request.repositoryId !== undefined && candidates.length > 0) {
      const held = await this.intake.heldBy(request.repositoryId, candidates);
      candidates = candidates.filter((pointer) => !held.has(pointer.oid));
    }
    const maxFile = this.intake.maxFileBytes;
    const chosen: LfsPointer[] = [];
    let bytes = 0;
    let deferred = 0;
    for (const pointer of candidates) {
      if (maxFile > 0 && pointer.size > maxFile) {
        this.logger.warn(`${request.what}: LFS object ${pointer.oid} left out: its ${pointer.size} bytes exceed LFS_MAX_FILE_SIZE`);
        continue;
      }
      if (chosen.length >= this.mirrorConfig.lfsMaxObjects || bytes + pointer.size > this.mirrorConfig.lfsMaxBytes) {
        deferred++;
        continue;
      }
      chosen.push(pointer);
      bytes += pointer.size;
    }
    if (deferred > 0) this.logger.warn(`${request.what}: ${deferred} LFS objects left for a later run (MIRROR_LFS_MAX_OBJECTS, MIRROR_LFS_MAX_SIZE)`);
    return { pointers: chosen, deferred };
  }

  /** Downloads `pointers` into the store; those refused or not offered are left out, those not reached in time counted. */
  private async download(request: LfsFetchRequest, pointers: LfsPointer[]): Promise<{ fetched: LfsPointer[]; unreached: number }> {
    const timeout = AbortSignal.timeout(this.mirrorConfig.lfsTimeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    const authorization = request.credentials
      ? `Basic ${Buffer.from(`${request.credentials.username}:${request.credentials.password}`).toString('base64')}`
      : undefined;
    const batchUrl = new URL(`${request.endpoint.href.replace(/\/+$/, '')}/objects/batch`);
    const fetched: LfsPointer[] = [];
    // Objects fetched or left out so far; the others were not reached when time ran out.
    let settled = 0;
    try {
      for (let start = 0; start < pointers.length; start += BATCH_SIZE) {
        const slice = pointers.slice(start, start + BATCH_SIZE);
        const answer = await this.batch(batchUrl, slice, authorization, signal);
        for (const pointer of slice) {
          const object = answer.get(pointer.oid);
          const action = object?.actions?.download;
          if (!action || typeof action.href !== 'string') {
            this.logger.warn(`${request.what}: LFS object ${pointer.oid} left out: ${object?.error?.message ?? 'not offered'}`);
            settled++;
            continue;
          }
          const headers: Record<string, string> = { ...(action.header ?? {}) };
          if (!Object.keys(headers).some((name) => name.toLowerCase() === 'authorization') && authorization && sameOrigin(action.href, batchUrl))
            headers.Authorization = authorization;
          try {
            await this.intake.receive(pointer, await this.get(action.href, headers, pointer.size, signal));
            fetched.push(pointer);
          } catch (error) {
            if (signal.aborted || !isObjectFailure(error)) throw error;
            this.logger.warn(`${request.what}: LFS object ${pointer.oid} refused: ${(error as Error).message}`);
          }
          settled++;
        }
      }
    } catch (error) {
      if (!signal.aborted) throw error;
      // Out of time or stopped: what was stored so far is kept; the rest waits for the next run.
      const unreached = pointers.length - settled;
      this.logger.warn(
        `${request.what}: LFS fetch ${request.signal?.aborted ? 'stopped' : 'out of time (MIRROR_LFS_TIMEOUT)'}, ${unreached} objects not reached`,
      );
      return { fetched, unreached };
    }
    return { fetched, unreached: 0 };
  }

  private async batch(url: URL, pointers: LfsPointer[], authorization: string | undefined, signal: AbortSignal): Promise<Map<string, BatchObject>> {
    const body = JSON.stringify({ operation: 'download', transfers: ['basic'], objects: pointers.map(({ oid, size }) => ({ oid, size })) });
    const headers: Record<string, string> = { Accept: LFS_MEDIA_TYPE, 'Content-Type': LFS_MEDIA_TYPE, 'Content-Length': String(Buffer.byteLength(body)) };
    if (authorization) headers.Authorization = authorization;
    const response = await this.open(url, 'POST', headers, signal, body);
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of response as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > MAX_BATCH_ANSWER_BYTES) {
        response.destroy();
        throw new InvalidInputError('Migration failed: the LFS batch answer is too large');
      }
      chunks.push(chunk);
    }
    let parsed: { objects?: BatchObject[] };
    try {
      parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { objects?: BatchObject[] };
    } catch {
      throw new InvalidInputError('Migration failed: the LFS server answered no JSON');
    }
    const found = new Map<string, BatchObject>();
    for (const object of Array.isArray(parsed.objects) ? parsed.objects : []) if (object && typeof object.oid === 'string') found.set(object.oid, object);
    return found;
  }

  /** An object's bytes; an unusable link or an answer other than 200 with the object's length is refused (422). */
  private async get(href: string, headers: Record<string, string>, size: number, signal: AbortSignal): Promise<Readable> {
    let url: URL;
    try {
      url = new URL(href);
    } catch {
      throw new InvalidInputError('the LFS server named an unusable URL');
    }
    return this.open(url, 'GET', headers, signal, undefined, size);
  }

  /** One request to a vetted host, pinned to its vetted addresses; a status other than 200 fails (422). */
  private async open(
    url: URL,
    method: string,
    headers: Record<string, string>,
    signal: AbortSignal,
    body?: string,
    expectedLength?: number,
  ): Promise<http.IncomingMessage> {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidInputError('Migration failed: the LFS server named an unsupported URL');
    const vetted = await this.policy.vet(url);
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const request = client.request(url, { method, headers, lookup: pinned(vetted), signal }, (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          reject(new InvalidInputError(`Migration failed: the LFS server answered ${response.statusCode} to ${method} ${url.pathname}`));
          return;
        }
        const length = response.headers['content-length'];
        if (expectedLength !== undefined && length !== undefined && Number(length) !== expectedLength) {
          response.destroy();
          reject(new InvalidInputError(`Migration failed: the LFS server sent ${length} bytes for an object of ${expectedLength}`));
          return;
        }
        resolve(response);
      });
      request.setTimeout(IDLE_MS, () => request.destroy(new Error('the LFS server sent nothing for too long')));
      request.on('error', (error) => reject(signal.aborted ? error : new InvalidInputError(`Migration failed: ${error.message}`)));
      request.end(body);
    });
  }
}

interface BatchObject {
  oid: string;
  actions?: { download?: { href?: string; header?: Record<string, string> } };
  error?: { message?: string };
}

/**
 * A failure of one object that leaves the others worth fetching: the source refused it, named an unusable or
 * disallowed link, sent other bytes than the pointer names, or cut the connection. Anything else (the store
 * failing) ends the run.
 */
function isObjectFailure(error: unknown): boolean {
  if (error instanceof InvalidInputError) return true;
  const code = (error as { code?: string }).code;
  return code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ECONNREFUSED' || code === 'EPIPE';
}

/** Connects to the addresses the host policy vetted, whatever the name resolves to by now. */
function pinned(vetted: VettedSource): LookupFunction {
  const entries = vetted.addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options.all) callback(null, entries);
    else callback(null, entries[0].address, entries[0].family);
  }) as unknown as LookupFunction;
}

function sameOrigin(href: string, base: URL): boolean {
  try {
    return new URL(href).origin === base.origin;
  } catch {
    return false;
  }
}
