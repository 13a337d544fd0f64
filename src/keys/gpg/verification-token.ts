import { createHash } from 'node:crypto';
import { formatTime } from '../../common/time';

export interface TokenOwner {
  id: number;
  name: string;
  email: string;
  createdUnix: number;
}

/** The window a token belongs to, relative to the current minute: 0 is the current window, 1 the next. */
export type TokenWindow = 0 | 1;

/**
 * The GPG verification token: SHA-256, in lowercase hex, over a one-minute time window and
 * the owner's creation time, name, email and id. `GET /user/gpg_key_token` hands out the next window's value
 * and `POST /user/gpg_keys` accepts the next and the current one, so a token stays usable for a minute or more.
 * (Forgejo derives it the same way, but its digest call appends the hash to the input instead of hashing it.)
 */
export function verificationToken(owner: TokenOwner, nowUnix: number, window: TokenWindow): string {
  const windowStart = Math.floor(nowUnix / 60) * 60 + window * 60;
  const material = [formatTime(windowStart), formatTime(owner.createdUnix), owner.name, owner.email, String(owner.id)].join(':');
  return createHash('sha256').update(material, 'utf8').digest('hex');
}
