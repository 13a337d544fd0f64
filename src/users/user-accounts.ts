import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { UserEntity } from './user.entity';
import { UserStore } from './user.store';

/**
 * What other modules read and change of user accounts (users and organisations alike). The users module's
 * stores stay inside it; every method here is the one statement of the store it delegates to, returned as it
 * is (no extra query, no extra await), so hot paths such as authentication cost exactly what they did.
 */
@Injectable()
export class UserAccounts {
  constructor(private readonly store: UserStore) {}

  byId(id: number, tx?: EntityManager): Promise<UserEntity | null> {
    return this.store.findById(id, tx);
  }

  byIds(ids: number[], tx?: EntityManager): Promise<UserEntity[]> {
    return this.store.findByIds(ids, tx);
  }

  /** Case-insensitive lookup of a user or organisation by name. */
  byName(name: string, tx?: EntityManager): Promise<UserEntity | null> {
    return this.store.findByName(name, tx);
  }

  /** The owner of an e-mail address (any of a user's addresses), if any. */
  emailOwnerId(email: string, tx?: EntityManager): Promise<number | null> {
    return this.store.emailOwnerId(email, tx);
  }

  /** The user names of the accounts `emails` belong to, by lower-cased address (see UserStore.namesByEmail). */
  namesByEmail(emails: string[], noReplyDomain: string, tx?: EntityManager): Promise<Map<string, string>> {
    return this.store.namesByEmail(emails, noReplyDomain, tx);
  }

  /** Verified addresses of a user. */
  verifiedEmails(uid: number): Promise<string[]> {
    return this.store.verifiedEmails(uid);
  }

  /** Adds `delta` to a stored counter in SQL, inside the caller's transaction. */
  addToCounter(tx: EntityManager, id: number, counter: 'numFollowers' | 'numFollowing' | 'numStars' | 'numRepos', delta: number): Promise<void> {
    return this.store.addToCounter(tx, id, counter, delta);
  }
}
