import { AccessMode } from './access-mode';
import { grantsInRows, parseUnits, teamGrant } from './access.store';

const columns = new Map(['r_id', 'grant_collaboration', 'grant_member', 'grant_team_mode', 'grant_team_units'].map((name, index) => [name, index]));

describe('the access store (pure parts)', () => {
  it('parses a team units text once and shares it, frozen', () => {
    const text = '{"repo.code":2,"repo.issues":1,"not.a.unit":3,"repo.wiki":"write"}';
    const units = parseUnits(text);
    expect(units).toEqual({ 'repo.code': AccessMode.Write, 'repo.issues': AccessMode.Read });
    expect(parseUnits(text)).toBe(units);
    expect(Object.isFrozen(units)).toBe(true);
    expect(parseUnits('not json')).toEqual({});
    expect(teamGrant(AccessMode.Admin, text).units['repo.wiki']).toBe(AccessMode.Admin);
  });

  it('reads the grants a repository lookup brought along: one row per team of the caller in the organisation', () => {
    const rows = [
      [7, null, 1, AccessMode.Read, '{"repo.code":1}'],
      [7, null, 1, null, null],
      [7, null, 1, AccessMode.Write, '{"repo.issues":2}'],
    ];
    const grants = grantsInRows({ columns, rows });
    expect(grants.orgMember).toBe(true);
    expect(grants.collaboration).toBeNull();
    expect(grants.teams.map((team) => team.mode)).toEqual([AccessMode.Read, AccessMode.Write]);
  });

  it('reads a collaboration, and a reaching team as membership', () => {
    expect(grantsInRows({ columns, rows: [[7, AccessMode.Admin, 0, null, null]] })).toEqual({ orgMember: false, teams: [], collaboration: AccessMode.Admin });
    expect(grantsInRows({ columns, rows: [[7, null, 0, AccessMode.Read, '{"repo.code":1}']] }).orgMember).toBe(true);
  });
});
