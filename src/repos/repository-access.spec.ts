import { UserEntity, Visibility } from '../users/user.entity';
import { isReadable, permissionOf, ViewerAccess, visibilityScope } from './repository-access';
import type { RepositoryEntity } from './repository.entity';

const OWNER_ID = 10;
const ORG_ID = 20;

function viewer(overrides: Partial<ViewerAccess> = {}): ViewerAccess {
  return { userId: 1, isAdmin: false, restricted: false, publicOnly: false, ownedOrgIds: new Set(), memberOrgIds: new Set(), ...overrides };
}

const anonymous = viewer({ userId: null });

function repo(ownerId: number, isPrivate: boolean): RepositoryEntity {
  return Object.assign(new (class {})() as RepositoryEntity, { ownerId, isPrivate });
}

function owner(id: number, visibility: Visibility): UserEntity {
  return Object.assign(new UserEntity(), { id, visibility });
}

describe('repository read access', () => {
  it('public repositories of public owners: everyone', () => {
    expect(isReadable(anonymous, repo(OWNER_ID, false), owner(OWNER_ID, Visibility.Public))).toBe(true);
    expect(isReadable(viewer(), repo(OWNER_ID, false), owner(OWNER_ID, Visibility.Public))).toBe(true);
  });

  it('private repositories: owner, owners of the owning organisation and site admins', () => {
    const privateRepo = repo(OWNER_ID, true);
    const publicOwner = owner(OWNER_ID, Visibility.Public);
    expect(isReadable(anonymous, privateRepo, publicOwner)).toBe(false);
    expect(isReadable(viewer(), privateRepo, publicOwner)).toBe(false);
    expect(isReadable(viewer({ userId: OWNER_ID }), privateRepo, publicOwner)).toBe(true);
    expect(isReadable(viewer({ isAdmin: true }), privateRepo, publicOwner)).toBe(true);
    const orgRepo = repo(ORG_ID, true);
    const org = owner(ORG_ID, Visibility.Public);
    expect(isReadable(viewer({ ownedOrgIds: new Set([ORG_ID]) }), orgRepo, org)).toBe(true);
    expect(isReadable(viewer({ memberOrgIds: new Set([ORG_ID]) }), orgRepo, org)).toBe(false);
  });

  it("public repositories follow the owner's visibility", () => {
    const publicRepo = repo(OWNER_ID, false);
    expect(isReadable(anonymous, publicRepo, owner(OWNER_ID, Visibility.Limited))).toBe(false);
    expect(isReadable(viewer(), publicRepo, owner(OWNER_ID, Visibility.Limited))).toBe(true);
    expect(isReadable(viewer(), publicRepo, owner(OWNER_ID, Visibility.Private))).toBe(false);
    expect(isReadable(viewer({ memberOrgIds: new Set([OWNER_ID]) }), publicRepo, owner(OWNER_ID, Visibility.Private))).toBe(true);
  });

  it('restricted users see only repositories they have explicit access to', () => {
    const restricted = viewer({ restricted: true });
    expect(isReadable(restricted, repo(OWNER_ID, false), owner(OWNER_ID, Visibility.Public))).toBe(false);
    expect(isReadable({ ...restricted, memberOrgIds: new Set([ORG_ID]) }, repo(ORG_ID, false), owner(ORG_ID, Visibility.Public))).toBe(true);
  });

  it('permissions: administrators get all three, other readers pull', () => {
    expect(permissionOf(viewer({ userId: OWNER_ID }), repo(OWNER_ID, false))).toEqual({ admin: true, push: true, pull: true });
    expect(permissionOf(viewer(), repo(OWNER_ID, false))).toEqual({ admin: false, push: false, pull: true });
    expect(permissionOf(anonymous, repo(OWNER_ID, false))).toEqual({ admin: false, push: false, pull: true });
  });

  it('list scopes', () => {
    expect(visibilityScope(anonymous)).toEqual({ kind: 'public' });
    expect(visibilityScope(viewer({ isAdmin: true }))).toEqual({ kind: 'everything' });
    expect(visibilityScope(viewer({ publicOnly: true }))).toEqual({ kind: 'public' });
    expect(visibilityScope(viewer({ ownedOrgIds: new Set([ORG_ID]), memberOrgIds: new Set([ORG_ID, 30]), restricted: true }))).toEqual({
      kind: 'signed-in',
      ownIds: [1, ORG_ID],
      memberOrgIds: [ORG_ID, 30],
      seesOtherOwners: false,
    });
  });
});
