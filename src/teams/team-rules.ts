import { AccessMode, isRepositoryUnit, parseAccessMode, RepositoryUnit, UnitModes } from '../access/access-mode';
import { InvalidInputError } from '../common/errors';
import type { TeamEntity } from '../users/organization.entities';

// Forgejo's rules for a team's name, permission and units, as a create or edit option states them.

export function teamExists(orgId: number, name: string): InvalidInputError {
  return new InvalidInputError(`team already exists [org_id: ${orgId}, name: ${name.toLowerCase()}]`);
}

export function assertUsableTeamName(name: string): void {
  if (name.toLowerCase() === 'new') throw new InvalidInputError(`name is reserved [name: ${name}]`);
}

export function hasUnitsMap(value: unknown): value is Record<string, unknown> {
  return value !== undefined && value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0;
}

/** Units whose mode never decides a team's permission: they can only be read. */
const EXTERNAL_UNITS: readonly RepositoryUnit[] = ['repo.ext_issues', 'repo.ext_wiki'];

/**
 * A team's permission and units, as Forgejo derives them: admin teams have every unit; below admin, a
 * `units_map` gives each unit its mode and the team's permission becomes the lowest mode it grants, while a
 * `units` list gives each unit the requested permission. Unknown unit or mode names → 422; nothing granted → 422.
 */
export function teamUnits(
  requested: AccessMode,
  option: { units?: unknown; units_map?: unknown },
  current: TeamEntity | null,
): { authorize: AccessMode; units: string } {
  if (requested >= AccessMode.Admin) return { authorize: requested, units: '' };
  const units: UnitModes = {};
  let authorize = requested;
  if (hasUnitsMap(option.units_map)) {
    for (const [key, modeName] of Object.entries(option.units_map)) {
      const name = key.toLowerCase();
      const mode = typeof modeName === 'string' ? parseAccessMode(modeName.toLowerCase()) : undefined;
      if (!isRepositoryUnit(name) || mode === undefined || mode > AccessMode.Admin) throw new InvalidInputError(`invalid unit or permission: ${key}`);
      units[name] = mode;
    }
    const modes = Object.entries(units)
      .filter(([name, mode]) => mode > AccessMode.None && !EXTERNAL_UNITS.includes(name as RepositoryUnit))
      .map(([, mode]) => mode);
    authorize = modes.length > 0 ? (Math.min(...modes) as AccessMode) : AccessMode.None;
  } else if (Array.isArray(option.units) && option.units.length > 0) {
    for (const key of option.units) {
      const name = typeof key === 'string' ? key.toLowerCase() : '';
      if (!isRepositoryUnit(name)) throw new InvalidInputError(`invalid unit: ${String(key)}`);
      units[name] = requested;
    }
  } else if (current && current.units) {
    return { authorize, units: current.units };
  }
  if (!Object.values(units).some((mode) => mode > AccessMode.None)) throw new InvalidInputError('units permission should not be empty');
  return { authorize, units: JSON.stringify(units) };
}
