import { AccessMode, RepositoryUnit, UNIT_INDEX } from './access-mode';

/** The `permissions` object of a `Repository` answer. */
export interface PermissionWire {
  admin: boolean;
  push: boolean;
  pull: boolean;
}

/**
 * What one caller may do to one repository, unit by unit: an overall mode (what decides `admin`) and, for a
 * repository of an organisation, the mode of each unit (teams grant units separately). Built only by the
 * access policy (access-policy.ts); every door reads it.
 */
export class RepositoryPermission {
  private constructor(
    /** The overall mode: `admin` and the repository's settings (rename, delete, collaborators, keys). */
    readonly mode: AccessMode,
    /** Per unit, in REPOSITORY_UNITS order; null when every unit has `mode`. */
    private readonly units: readonly AccessMode[] | null,
  ) {}

  static uniform(mode: AccessMode): RepositoryPermission {
    return new RepositoryPermission(mode, null);
  }

  /** `units`: the mode of each unit, in REPOSITORY_UNITS order. */
  static perUnit(mode: AccessMode, units: readonly AccessMode[]): RepositoryPermission {
    return new RepositoryPermission(mode, units);
  }

  static readonly NONE = RepositoryPermission.uniform(AccessMode.None);

  /** The mode the caller has on `unit`. */
  unitMode(unit: RepositoryUnit): AccessMode {
    return this.units === null ? this.mode : this.units[UNIT_INDEX[unit]];
  }

  /** Whether the repository exists for the caller at all: some unit is readable (else 404). */
  get hasAccess(): boolean {
    if (this.units === null) return this.mode >= AccessMode.Read;
    return this.units.some((mode) => mode >= AccessMode.Read);
  }

  canRead(unit: RepositoryUnit): boolean {
    return this.unitMode(unit) >= AccessMode.Read;
  }

  canWrite(unit: RepositoryUnit): boolean {
    return this.unitMode(unit) >= AccessMode.Write;
  }

  /** Administers the repository: its settings, collaborators, teams, deploy keys, rename, delete. */
  get isAdmin(): boolean {
    return this.mode >= AccessMode.Admin;
  }

  /** Owns the repository (owner, site admin, Owners and admin teams): may delete it; an admin collaborator may not. */
  get isOwner(): boolean {
    return this.mode >= AccessMode.Owner;
  }

  /** As Forgejo: `admin` from the overall mode, `push` and `pull` from the code unit. */
  toWire(): PermissionWire {
    return { admin: this.isAdmin, push: this.canWrite('repo.code'), pull: this.canRead('repo.code') };
  }
}
