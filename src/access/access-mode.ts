/** Forgejo's access modes, in the order they grant (`team.authorize` and `collaboration.mode` store the number). */
export enum AccessMode {
  None = 0,
  Read = 1,
  Write = 2,
  Admin = 3,
  Owner = 4,
}

export const ACCESS_MODE_NAMES: Record<AccessMode, string> = {
  [AccessMode.None]: 'none',
  [AccessMode.Read]: 'read',
  [AccessMode.Write]: 'write',
  [AccessMode.Admin]: 'admin',
  [AccessMode.Owner]: 'owner',
};

/** The mode a name gives, or undefined for a name Forgejo does not know. */
export function parseAccessMode(name: string): AccessMode | undefined {
  const entry = Object.entries(ACCESS_MODE_NAMES).find(([, value]) => value === name);
  return entry ? (Number(entry[0]) as AccessMode) : undefined;
}

export function accessModeName(mode: number): string {
  return ACCESS_MODE_NAMES[mode as AccessMode] ?? 'none';
}

/**
 * Every repository unit Forgejo names. Anvil enforces `repo.code`, `repo.issues`, `repo.pulls`, `repo.releases` and `repo.packages`; the
 * others are stored on teams for the features to come.
 */
export const REPOSITORY_UNITS = [
  'repo.code',
  'repo.issues',
  'repo.ext_issues',
  'repo.wiki',
  'repo.ext_wiki',
  'repo.pulls',
  'repo.releases',
  'repo.projects',
  'repo.packages',
  'repo.actions',
] as const;

export type RepositoryUnit = (typeof REPOSITORY_UNITS)[number];

/** Each unit's place in REPOSITORY_UNITS (per-unit modes are kept as arrays in that order). */
export const UNIT_INDEX = Object.fromEntries(REPOSITORY_UNITS.map((unit, index) => [unit, index])) as Record<RepositoryUnit, number>;

export function isRepositoryUnit(name: string): name is RepositoryUnit {
  return (REPOSITORY_UNITS as readonly string[]).includes(name);
}

/** A team's mode per unit; a unit it does not name is `none` for it. */
export type UnitModes = Partial<Record<RepositoryUnit, AccessMode>>;
