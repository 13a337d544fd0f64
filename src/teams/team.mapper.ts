import { accessModeName, AccessMode } from '../access/access-mode';
import { teamGrant } from '../access/access.store';
import type { TeamEntity } from '../users/organization.entities';
import type { OrganizationWire } from '../users/organization.wire';
import type { TeamWire } from './team.wire';

/**
 * Pure: the `Team` JSON. Admin teams have every unit at their mode; other teams the units they name, at the
 * mode each was given (`none` included, as Forgejo lists it). The Owners team keeps the shape the seed
 * contract gives it: the code unit at `owner`.
 */
export function toTeamWire(team: TeamEntity, organization: OrganizationWire | null = null): TeamWire {
  const permission = accessModeName(team.authorize);
  const unitsMap: Record<string, string> = {};
  if (team.authorize >= AccessMode.Owner) unitsMap['repo.code'] = permission;
  else for (const [unit, mode] of Object.entries(teamGrant(team.authorize, team.units).units)) unitsMap[unit] = accessModeName(mode);
  return {
    id: team.id,
    name: team.name,
    description: team.description,
    organization,
    includes_all_repositories: team.includesAllRepositories,
    permission,
    units: Object.keys(unitsMap),
    units_map: unitsMap,
    can_create_org_repo: team.canCreateOrgRepo,
  };
}
