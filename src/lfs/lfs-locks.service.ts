import { createHash } from 'node:crypto';
import * as posixPath from 'node:path/posix';
import { Injectable } from '@nestjs/common';
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from '../common/errors';
import { Clock } from '../common/time';
import { LfsConfig } from '../config/slices';
import { UserAccounts } from '../users/user-accounts';
import type { LfsLockEntity } from './lfs-lock.entity';
import { LfsLockStore } from './lfs-lock.store';
import type { LfsTarget } from './lfs.service';
import type { LfsLockListWire, LfsLockVerifyWire, LfsLockWire } from './lfs.wire';

/** A lock that exists already: 409 with that lock in the body, as the locking API says. */
export class LockExistsError extends ConflictError {
  constructor(readonly lock: LfsLockWire) {
    super('already created lock');
  }
}

/** Longest lock path accepted (git paths are rarely longer; the column is text). */
const MAX_PATH = 4096;

/**
 * LFS file locks (`git lfs lock`): one lock per path of a repository whatever its letter case, held by the user
 * who took it; listed with a cursor (the last id seen), so pages never repeat.
 */
@Injectable()
export class LfsLocksService {
  constructor(
    private readonly store: LfsLockStore,
    private readonly users: UserAccounts,
    private readonly clock: Clock,
    private readonly lfsConfig: LfsConfig,
  ) {}

  async create(target: LfsTarget, body: Record<string, unknown>): Promise<LfsLockWire> {
    const path = cleanPath(body.path);
    const { created, lock } = await this.store.create({
      repositoryId: target.repo.id,
      ownerId: target.auth.user!.id,
      path,
      pathKey: pathKey(path),
      createdUnix: this.clock.nowUnix(),
    });
    const wire = await this.toWire([lock]);
    if (!created) throw new LockExistsError(wire[0]);
    return wire[0];
  }

  async list(target: LfsTarget, query: { id?: string; path?: string; cursor?: string; limit?: string }): Promise<LfsLockListWire> {
    if (query.id !== undefined && query.id !== '') {
      const id = /^\d{1,15}$/.test(query.id) ? Number(query.id) : NaN;
      if (Number.isNaN(id)) throw new InvalidInputError(`bad request : invalid id ${JSON.stringify(query.id.slice(0, 32))}`);
      const lock = await this.store.find(target.repo.id, id);
      return { locks: await this.toWire(lock ? [lock] : []) };
    }
    if (query.path !== undefined && query.path !== '') {
      const lock = await this.store.findByPath(target.repo.id, pathKey(cleanPath(query.path)));
      return { locks: await this.toWire(lock ? [lock] : []) };
    }
    const { locks, next } = await this.page(target, query.cursor, query.limit);
    return { locks: await this.toWire(locks), ...(next ? { next_cursor: next } : {}) };
  }

  /** POST locks/verify: the page of locks, split into the caller's and the others'. */
  async verify(target: LfsTarget, body: Record<string, unknown>): Promise<LfsLockVerifyWire> {
    const text = (value: unknown) => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined);
    const { locks, next } = await this.page(target, text(body.cursor), text(body.limit));
    const wire = await this.toWire(locks);
    const mine = target.auth.user!.id;
    return {
      ours: wire.filter((_, index) => locks[index].ownerId === mine),
      theirs: wire.filter((_, index) => locks[index].ownerId !== mine),
      ...(next ? { next_cursor: next } : {}),
    };
  }

  /** POST locks/{id}/unlock: the holder's own lock, or anyone's with `force`. */
  async unlock(target: LfsTarget, idText: string, body: Record<string, unknown>): Promise<LfsLockWire> {
    const id = /^\d{1,15}$/.test(idText) ? Number(idText) : 0;
    const lock = id > 0 ? await this.store.find(target.repo.id, id) : null;
    if (!lock) throw new NotFoundError('Not Found');
    if (lock.ownerId !== target.auth.user!.id && body.force !== true) throw new ForbiddenError("user doesn't own lock and force flag is not set");
    const [wire] = await this.toWire([lock]);
    if (!(await this.store.delete(lock.id))) throw new NotFoundError('Not Found');
    return wire;
  }

  private async page(target: LfsTarget, cursorText: string | undefined, limitText: string | undefined): Promise<{ locks: LfsLockEntity[]; next?: string }> {
    const cursor = cursorText !== undefined && /^\d{1,15}$/.test(cursorText) ? Number(cursorText) : 0;
    const asked = limitText !== undefined && /^\d{1,9}$/.test(limitText) ? Number(limitText) : 0;
    const limit = asked > 0 ? Math.min(asked, this.lfsConfig.locksPagingNum) : this.lfsConfig.locksPagingNum;
    // One more than the page tells whether another page follows.
    const found = await this.store.page(target.repo.id, cursor, limit + 1);
    const locks = found.slice(0, limit);
    return { locks, next: found.length > limit ? String(locks[locks.length - 1].id) : undefined };
  }

  private async toWire(locks: LfsLockEntity[]): Promise<LfsLockWire[]> {
    const owners = new Map((await this.users.byIds([...new Set(locks.map((lock) => lock.ownerId))])).map((user) => [user.id, user.name]));
    return locks.map((lock) => ({
      id: String(lock.id),
      path: lock.path,
      locked_at: new Date(lock.createdUnix * 1000).toISOString().replace('.000Z', 'Z'),
      owner: { name: owners.get(lock.ownerId) ?? '' },
    }));
  }
}

/** A repository-relative path without `.`/`..` steps or leading slashes; 422 when nothing is left. */
function cleanPath(value: unknown): string {
  if (typeof value !== 'string' || value.length > MAX_PATH || value.includes('\0')) throw new InvalidInputError('a lock needs a path');
  const cleaned = posixPath.normalize(`/${value}`).replace(/^\/+/, '');
  if (cleaned === '' || cleaned === '.') throw new InvalidInputError('a lock needs a path');
  return cleaned;
}

function pathKey(path: string): string {
  return createHash('sha256').update(path.toLowerCase()).digest('hex');
}
