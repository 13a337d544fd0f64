import { AccessMode } from './access-mode';
import type { OrganizationStanding } from './access.store';
import { administersNewRepositories, createsRepositories, ownsOrganization, packageMode } from './organization-policy';

const team = (mode: AccessMode, extra: Partial<OrganizationStanding['teams'][number]> = {}) => ({
  id: 1,
  mode,
  canCreateOrgRepo: false,
  includesAllRepositories: false,
  units: {},
  ...extra,
});
const standing = (...teams: OrganizationStanding['teams']): OrganizationStanding => ({ isMember: teams.length > 0, teams });

describe('the organisation policy', () => {
  it('makes members of the Owners team owners, and nobody else', () => {
    expect(ownsOrganization(standing(team(AccessMode.Owner)))).toBe(true);
    expect(ownsOrganization(standing(team(AccessMode.Admin, { includesAllRepositories: true })))).toBe(false);
    expect(ownsOrganization(standing())).toBe(false);
  });

  it('lets owners and teams with can_create_org_repo create repositories', () => {
    expect(createsRepositories(standing(team(AccessMode.Owner)))).toBe(true);
    expect(createsRepositories(standing(team(AccessMode.Read, { canCreateOrgRepo: true })))).toBe(true);
    expect(createsRepositories(standing(team(AccessMode.Admin)))).toBe(false);
  });

  it('needs an admin team reaching every repository for a creator to administer a new repository without a collaboration', () => {
    expect(administersNewRepositories(standing(team(AccessMode.Owner, { includesAllRepositories: true })))).toBe(true);
    expect(administersNewRepositories(standing(team(AccessMode.Admin, { includesAllRepositories: true })))).toBe(true);
    expect(administersNewRepositories(standing(team(AccessMode.Admin)))).toBe(false);
    expect(administersNewRepositories(standing(team(AccessMode.Write, { includesAllRepositories: true, canCreateOrgRepo: true })))).toBe(false);
  });

  it("gives package writes from a team's permission, or else from its repo.packages unit", () => {
    expect(packageMode(standing(team(AccessMode.Write)))).toBe(AccessMode.Write);
    expect(packageMode(standing(team(AccessMode.Read, { units: { 'repo.packages': AccessMode.Write } })))).toBe(AccessMode.Write);
    expect(packageMode(standing(team(AccessMode.Read, { units: { 'repo.packages': AccessMode.Read } })))).toBe(AccessMode.Read);
    expect(packageMode(standing())).toBe(AccessMode.None);
  });
});
