import { addressKey, GitClient } from './git-client';

export interface ShareLimits {
  perAddress: number;
  perUser: number;
  anonymous: number;
}

/**
 * Fair shares of the git slots: how many one address, one signed-in user and all anonymous callers together
 * hold now. An anonymous address gets half the share of an address. The server's own work (batch readers,
 * background walks) has no client and no share.
 */
export class GitShares {
  private readonly byAddress = new Map<string, number>();
  private readonly byUser = new Map<number, number>();
  private anonymousHeld = 0;

  constructor(private readonly limits: ShareLimits) {}

  /** Slots held for clients now (the server's own work not counted). */
  get held(): number {
    let total = 0;
    for (const count of this.byAddress.values()) total += count;
    return total;
  }

  /** Whether `client` may take one more slot now. */
  fits(client: GitClient | undefined): boolean {
    if (!client) return true;
    const address = this.byAddress.get(addressKey(client.address)) ?? 0;
    if (client.userId === null) {
      return this.anonymousHeld < this.limits.anonymous && address < Math.max(1, Math.floor(this.limits.perAddress / 2));
    }
    return address < this.limits.perAddress && (this.byUser.get(client.userId) ?? 0) < this.limits.perUser;
  }

  /** How many slots `client` may hold at once: its address's share, or its user's when that is smaller. */
  shareOf(client: GitClient): number {
    if (client.userId === null) return Math.max(1, Math.floor(this.limits.perAddress / 2));
    return Math.min(this.limits.perAddress, this.limits.perUser);
  }

  /** Why `client` waits: its own share, or the whole cap. */
  describeWait(client: GitClient | undefined): string {
    if (client && !this.fits(client)) {
      return client.userId === null
        ? 'too many git operations from your address or from anonymous clients, try again later'
        : 'too many git operations from your account or address, try again later';
    }
    return 'too many git operations are running, try again later';
  }

  take(client: GitClient | undefined): void {
    if (!client) return;
    bump(this.byAddress, addressKey(client.address), 1);
    if (client.userId === null) this.anonymousHeld += 1;
    else bump(this.byUser, client.userId, 1);
  }

  give(client: GitClient | undefined): void {
    if (!client) return;
    bump(this.byAddress, addressKey(client.address), -1);
    if (client.userId === null) this.anonymousHeld -= 1;
    else bump(this.byUser, client.userId, -1);
  }
}

function bump<K>(counts: Map<K, number>, key: K, delta: number): void {
  const next = (counts.get(key) ?? 0) + delta;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
