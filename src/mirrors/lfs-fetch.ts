import * as http from 'node:http';
import * as https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { InvalidInputError } from '../common/errors';
import { GitRemotes, RemoteCredentials } from '../git/git-remotes';
import { LfsIntake } from '../lfs/lfs-intake';
import type { LfsPointer } from '../lfs/lfs.wire';
import { HostPolicy, VettedSource } from '../outbound/host-policy';

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

/**
 * Brings a migrated repository's LFS objects from the LFS server its source names (batch API, basic transfer):
 * every host asked passes the outbound host policy and is connected to at exactly the addresses it vetted;
 * each object streams into the LFS store, verified against its oid and size. Objects the source cannot give
 * are left out, as Forgejo leaves them.
 */
@Injectable()
export class LfsFetch {
  private readonly logger = new Logger('LfsFetch');

  constructor(
    private readonly policy: HostPolicy,
    private readonly intake: LfsIntake,
    private readonly remotes: GitRemotes,
  ) {}

  /**
   * The objects fetched for the repository in `dir`, to `link` with its row. Every object is fetched, even one
   * stored already: a pointer is only text the source's owner wrote, and only the bytes prove that the source
   * has the object (otherwise a pointer naming another user's private object would link it).
   */
  async fetch(dir: string, endpoint: URL, credentials: RemoteCredentials | undefined, owner: { id: number; name: string }): Promise<LfsPointer[]> {
    const pointers = new Map<string, LfsPointer>();
    await this.remotes.smallBlobs(dir, this.intake.maxPointerBytes, async (blobs) => {
      for (const pointer of this.intake.pointersIn(blobs)) pointers.set(pointer.oid, pointer);
    });
    const all = [...pointers.values()];
    if (all.length === 0) return [];
    await this.intake.assertRoom(owner, all);
    const fetched: LfsPointer[] = [];
    const authorization = credentials ? `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}` : undefined;
    const batchUrl = new URL(`${endpoint.href.replace(/\/+$/, '')}/objects/batch`);
    for (let start = 0; start < all.length; start += BATCH_SIZE) {
      const slice = all.slice(start, start + BATCH_SIZE);
      const answer = await this.batch(batchUrl, slice, authorization);
      for (const pointer of slice) {
        const object = answer.get(pointer.oid);
        const action = object?.actions?.download;
        if (!action || typeof action.href !== 'string') {
          this.logger.warn(`migration: LFS object ${pointer.oid} left out: ${object?.error?.message ?? 'not offered'}`);
          continue;
        }
        const headers: Record<string, string> = { ...(action.header ?? {}) };
        if (!Object.keys(headers).some((name) => name.toLowerCase() === 'authorization') && authorization && sameOrigin(action.href, batchUrl)) headers.Authorization = authorization;
        await this.intake.receive(pointer, await this.get(new URL(action.href), headers, pointer.size));
        fetched.push(pointer);
      }
    }
    return fetched;
  }

  link(tx: EntityManager, repositoryId: number, pointers: LfsPointer[]): Promise<void> {
    return this.intake.link(tx, repositoryId, pointers);
  }

  private async batch(url: URL, pointers: LfsPointer[], authorization: string | undefined): Promise<Map<string, BatchObject>> {
    const body = JSON.stringify({ operation: 'download', transfers: ['basic'], objects: pointers.map(({ oid, size }) => ({ oid, size })) });
    const headers: Record<string, string> = { Accept: LFS_MEDIA_TYPE, 'Content-Type': LFS_MEDIA_TYPE, 'Content-Length': String(Buffer.byteLength(body)) };
    if (authorization) headers.Authorization = authorization;
    const response = await this.open(url, 'POST', headers, body);
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

  private get(url: URL, headers: Record<string, string>, size: number): Promise<Readable> {
    return this.open(url, 'GET', headers, undefined, size);
  }

  /** One request to a vetted host, pinned to its vetted addresses; a status other than 200 fails (422). */
  private async open(url: URL, method: string, headers: Record<string, string>, body?: string, expectedLength?: number): Promise<http.IncomingMessage> {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidInputError('Migration failed: the LFS server named an unsupported URL');
    const vetted = await this.policy.vet(url);
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const request = client.request(url, { method, headers, lookup: pinned(vetted) }, (response) => {
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
      request.on('error', (error) => reject(new InvalidInputError(`Migration failed: ${error.message}`)));
      request.end(body);
    });
  }
}

interface BatchObject {
  oid: string;
  actions?: { download?: { href?: string; header?: Record<string, string> } };
  error?: { message?: string };
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
