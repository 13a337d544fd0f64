import type { UserEntity } from '../users/user.entity';
import type { ScopeSet } from './scopes';

/** How the caller signed in; `reverse-proxy`: a trusted gateway named the user (a session with every scope). */
export type AuthMethod = 'anonymous' | 'password' | 'token' | 'ssh-key' | 'reverse-proxy';

/**
 * Who is calling, after authentication, account-state checks and sudo. Services receive it as the viewer
 * and decide visibility from it; mappers decide which fields to show from it.
 */
export class AuthContext {
  constructor(
    /** The acting user (the sudo target when sudo is used); null when anonymous. */
    readonly user: UserEntity | null,
    readonly method: AuthMethod,
    /** The token's scopes; null unless the caller used a token. */
    readonly scopes: ScopeSet | null,
  ) {}

  static anonymous(): AuthContext {
    return new AuthContext(null, 'anonymous', null);
  }

  get isSignedIn(): boolean {
    return this.user !== null;
  }

  get id(): number | null {
    return this.user?.id ?? null;
  }

  /** A public-only token sees only public things and loses admin powers and sudo. */
  get publicOnly(): boolean {
    return this.scopes?.publicOnly ?? false;
  }

  get isAdmin(): boolean {
    return (this.user?.isAdmin ?? false) && !this.publicOnly;
  }

  is(userId: number): boolean {
    return this.user !== null && this.user.id === userId;
  }

  /** The user themselves or a site admin: who sees private fields of a user. */
  isSelfOrAdmin(userId: number): boolean {
    return this.is(userId) || this.isAdmin;
  }

  /**
   * What makes two callers see the same answer of a read whose access was checked: the same user (or nobody),
   * with or without a public-only token. Part of the keys of answers kept for later (recent-reads.ts).
   */
  get viewKey(): string {
    return `${this.user?.id ?? 0}${this.publicOnly ? 'p' : ''}`;
  }
}

/** Services take the caller as a Viewer; the name says what it is used for. */
export type Viewer = AuthContext;
