import { Visibility } from '../users/user.entity';
import { AccessMode } from './access-mode';
import { AccessGrants, NO_GRANTS, readableWithoutGrants, resolveDeployKeyPermission, resolvePermission } from './access-policy';
import { teamGrant } from './access.store';

const OWNER = 10;
const ORG = 20;
const CALLER = 1;
const user = (userId: number | null, extra: { isAdmin?: boolean; restricted?: boolean } = {}) => ({ userId, isAdmin: false, restricted: false, ...extra });
const repo = (ownerId: number, isPrivate: boolean) => ({ id: 100, ownerId, isPrivate });
const owner = (id: number, isOrganization: boolean, visibility = Visibility.Public) => ({ id, isOrganization, visibility });
const grants = (extra: Partial<AccessGrants>): AccessGrants => ({ ...NO_GRANTS, ...extra });
const wire = (...args: Parameters<typeof resolvePermission>) => resolvePermission(...args).toWire();

describe('the access policy', () => {
  it('lets anonymous callers read public repositories of public owners only', () => {
    expect(wire(user(null), repo(OWNER, false), owner(OWNER, false), NO_GRANTS)).toEqual({ admin: false, push: false, pull: true });
    expect(resolvePermission(user(null), repo(OWNER, true), owner(OWNER, false), NO_GRANTS).hasAccess).toBe(false);
    expect(resolvePermission(user(null), repo(OWNER, false), owner(OWNER, false, Visibility.Limited), NO_GRANTS).hasAccess).toBe(false);
  });

  it('gives the owner and site admins everything', () => {
    expect(wire(user(OWNER), repo(OWNER, true), owner(OWNER, false), NO_GRANTS)).toEqual({ admin: true, push: true, pull: true });
    expect(wire(user(CALLER, { isAdmin: true }), repo(OWNER, true), owner(OWNER, false), NO_GRANTS)).toEqual({ admin: true, push: true, pull: true });
  });

  it('gives the Owners team and admin teams the whole repository', () => {
    const owners = grants({ orgMember: true, teams: [teamGrant(AccessMode.Owner, '')] });
    expect(resolvePermission(user(CALLER), repo(ORG, true), owner(ORG, true), owners).mode).toBe(AccessMode.Owner);
    const admins = grants({ orgMember: true, teams: [teamGrant(AccessMode.Admin, '')] });
    expect(wire(user(CALLER), repo(ORG, true), owner(ORG, true), admins)).toEqual({ admin: true, push: true, pull: true });
    expect(resolvePermission(user(CALLER), repo(ORG, true), owner(ORG, true), admins).isOwner).toBe(true);
    expect(resolvePermission(user(CALLER), repo(ORG, true), owner(ORG, true), grants({ collaboration: AccessMode.Admin })).isOwner).toBe(false);
  });

  it('gives a team member the best of their teams per unit', () => {
    const teams = [teamGrant(AccessMode.Read, '{"repo.code":1,"repo.releases":1}'), teamGrant(AccessMode.Write, '{"repo.code":2}')];
    const permission = resolvePermission(user(CALLER), repo(ORG, true), owner(ORG, true), grants({ orgMember: true, teams }));
    expect(permission.toWire()).toEqual({ admin: false, push: true, pull: true });
    expect(permission.canWrite('repo.releases')).toBe(false);
    expect(permission.canRead('repo.releases')).toBe(true);
    expect(permission.canRead('repo.wiki')).toBe(false);
  });

  it('shows a private repository to a team without repo.code, but not its code', () => {
    const teams = [teamGrant(AccessMode.Write, '{"repo.issues":2}')];
    const permission = resolvePermission(user(CALLER), repo(ORG, true), owner(ORG, true), grants({ orgMember: true, teams }));
    expect(permission.hasAccess).toBe(true);
    expect(permission.toWire()).toEqual({ admin: false, push: false, pull: false });
  });

  it('reads public repositories on units a team does not name', () => {
    const teams = [teamGrant(AccessMode.Write, '{"repo.issues":2}')];
    const permission = resolvePermission(user(CALLER), repo(ORG, false), owner(ORG, true), grants({ orgMember: true, teams }));
    expect(permission.toWire()).toEqual({ admin: false, push: false, pull: true });
  });

  it('gives a collaborator their mode on every unit', () => {
    for (const [mode, expected] of [
      [AccessMode.Read, { admin: false, push: false, pull: true }],
      [AccessMode.Write, { admin: false, push: true, pull: true }],
      [AccessMode.Admin, { admin: true, push: true, pull: true }],
    ] as const) {
      expect(wire(user(CALLER), repo(OWNER, true), owner(OWNER, false), grants({ collaboration: mode }))).toEqual(expected);
      expect(wire(user(CALLER), repo(ORG, true), owner(ORG, true, Visibility.Private), grants({ collaboration: mode }))).toEqual(expected);
    }
  });

  it('gives an organisation member without a team nothing on private repositories', () => {
    expect(resolvePermission(user(CALLER), repo(ORG, true), owner(ORG, true), grants({ orgMember: true })).hasAccess).toBe(false);
    expect(wire(user(CALLER), repo(ORG, false), owner(ORG, true, Visibility.Private), grants({ orgMember: true }))).toEqual({
      admin: false,
      push: false,
      pull: true,
    });
    expect(resolvePermission(user(CALLER), repo(ORG, false), owner(ORG, true, Visibility.Private), NO_GRANTS).hasAccess).toBe(false);
  });

  it('lets restricted users reach only what teams and collaborations give', () => {
    const restricted = user(CALLER, { restricted: true });
    expect(resolvePermission(restricted, repo(OWNER, false), owner(OWNER, false), NO_GRANTS).hasAccess).toBe(false);
    expect(resolvePermission(restricted, repo(ORG, false), owner(ORG, true), grants({ orgMember: true })).hasAccess).toBe(false);
    expect(wire(restricted, repo(OWNER, false), owner(OWNER, false), grants({ collaboration: AccessMode.Read }))).toEqual({
      admin: false,
      push: false,
      pull: true,
    });
    const teams = [teamGrant(AccessMode.Read, '{"repo.code":1}')];
    expect(wire(restricted, repo(ORG, true), owner(ORG, true), grants({ orgMember: true, teams }))).toEqual({ admin: false, push: false, pull: true });
    expect(readableWithoutGrants(restricted, repo(OWNER, false), owner(OWNER, false))).toBe(false);
  });

  it('decides without grants only what grants cannot change', () => {
    expect(readableWithoutGrants(user(CALLER), repo(OWNER, false), owner(OWNER, false, Visibility.Limited))).toBe(true);
    expect(readableWithoutGrants(user(CALLER), repo(OWNER, false), owner(OWNER, false, Visibility.Private))).toBe(false);
    expect(readableWithoutGrants(user(CALLER), repo(OWNER, true), owner(OWNER, false))).toBe(false);
    expect(readableWithoutGrants(user(null), repo(OWNER, false), owner(OWNER, false, Visibility.Limited))).toBe(false);
  });

  it('gives a deploy key its own mode on its repository, at most write, and nothing elsewhere', () => {
    expect(resolveDeployKeyPermission(AccessMode.Read).toWire()).toEqual({ admin: false, push: false, pull: true });
    expect(resolveDeployKeyPermission(AccessMode.Write).toWire()).toEqual({ admin: false, push: true, pull: true });
    expect(resolveDeployKeyPermission(AccessMode.Owner).isAdmin).toBe(false);
    expect(resolveDeployKeyPermission(null).hasAccess).toBe(false);
    expect(resolveDeployKeyPermission(AccessMode.None).hasAccess).toBe(false);
  });
});
