import { AuditService } from '../audit/audit.service';
import { Injectable } from '@nestjs/common';
import { OrganizationPolicy } from '../access/organization-policy';
import { AuthContext } from '../auth/auth-context';
import { EMAIL } from '../common/fields';
import { requireSignedIn } from '../auth/route-auth';
import { ForbiddenError, InvalidInputError, NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { Clock } from '../common/time';
import { isUniqueViolation, Transactions } from '../database/transactions';
import { ADMIN_ACCESS_MODE, OWNER_ACCESS_MODE, READ_ACCESS_MODE, WRITE_ACCESS_MODE } from './organization.entities';
import { OrganizationStore, TeamRemoval } from './organization.store';
import { parseVisibility, UserEntity, UserType, Visibility } from './user.entity';
import { assertUsableUserName } from './user-names';
import { UserVisibility } from './user-visibility';
import { UserStore } from './user.store';
import { UsersService } from './users.service';

export interface NewOrganization {
  username: string;
  fullName?: string;
  email?: string;
  description?: string;
  website?: string;
  location?: string;
  visibility?: string;
  repoAdminChangeTeamAccess?: boolean;
}

export interface OrganizationChanges {
  fullName?: string;
  email?: string;
  description?: string;
  website?: string;
  location?: string;
  visibility?: string;
  repoAdminChangeTeamAccess?: boolean;
}

export interface OrganizationPermissions {
  isOwner: boolean;
  isAdmin: boolean;
  canWrite: boolean;
  canRead: boolean;
  canCreateRepository: boolean;
}

type SignedInViewer = AuthContext & { user: UserEntity };

export const LAST_OWNER = 'the last owner of an organization cannot be removed';

/**
 * Organisations: creation, reading, deletion, the Owners team and membership. Every `/orgs/{org}` route
 * checks in this order: organisation lookup 404 → public-only token 403 → visibility 404 → sign-in 401 →
 * membership or ownership (asked of the organisation policy).
 */
@Injectable()
export class OrganizationsService {
  constructor(
    private readonly users: UsersService,
    private readonly userStore: UserStore,
    private readonly organizations: OrganizationStore,
    private readonly visibility: UserVisibility,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly policy: OrganizationPolicy,
    private readonly audit: AuditService,
  ) {}

  /** POST /orgs: the creator becomes the only member of the new Owners team. */
  async create(viewer: SignedInViewer, input: NewOrganization): Promise<UserEntity> {
    if (!viewer.isAdmin && !viewer.user.allowCreateOrganization) throw new ForbiddenError('Create organization not allowed');
    return this.createOwnedBy(viewer.user, input);
  }

  /** POST /admin/users/{username}/orgs: a site admin creates an organisation owned by an individual user. */
  async createForUser(username: string, input: NewOrganization): Promise<UserEntity> {
    return this.createOwnedBy(await this.users.individualByName(username), input);
  }

  private async createOwnedBy(owner: UserEntity, input: NewOrganization): Promise<UserEntity> {
    assertUsableUserName(input.username);
    const visibility = input.visibility === undefined || input.visibility === '' ? Visibility.Public : parseVisibility(input.visibility);
    if (visibility === undefined) throw new InvalidInputError('[Visibility]: In');
    const exists = () => new InvalidInputError(`user already exists [name: ${input.username}]`);
    const now = this.clock.nowUnix();
    try {
      return await this.transactions.run(async (tx) => {
        if (await this.userStore.nameTaken(input.username, tx)) throw exists();
        const org = await this.userStore.insert(tx, {
          name: input.username,
          lowerName: input.username.toLowerCase(),
          type: UserType.Organization,
          fullName: input.fullName ?? '',
          email: input.email ?? '',
          description: input.description ?? '',
          website: input.website ?? '',
          location: input.location ?? '',
          visibility,
          repoAdminChangeTeamAccess: input.repoAdminChangeTeamAccess ?? false,
          isActive: true,
          createdUnix: now,
          updatedUnix: now,
        });
        await this.organizations.addOwnersTeam(tx, org.id, owner.id);
        await this.audit.record(tx, {
          action: 'organization.create',
          target: orgTarget(org),
          detail: { owner: owner.name, visibility: input.visibility || 'public' },
        });
        return org;
      });
    } catch (error) {
      // A concurrent creation won the race for the name.
      if (isUniqueViolation(error)) throw exists();
      throw error;
    }
  }

  /** GET /orgs/{org} and the first steps of every /orgs/{org} route. */
  async visibleByName(viewer: AuthContext, name: string): Promise<UserEntity> {
    const org = await this.userStore.findByName(name);
    if (!org || !org.isOrganization) throw new NotFoundError();
    await this.visibility.assertVisible(viewer, org);
    return org;
  }

  /**
   * PATCH /orgs/{org}: owners and site admins. As Forgejo, the text fields take the values sent (absent ones
   * become empty), an empty e-mail keeps the address, and visibility changes only when given.
   */
  async edit(viewer: AuthContext, name: string, input: OrganizationChanges): Promise<UserEntity> {
    const org = await this.visibleByName(viewer, name);
    await this.assertOwner(viewer, org);
    const changes: Partial<UserEntity> = {
      fullName: input.fullName ?? '',
      description: input.description ?? '',
      website: input.website ?? '',
      location: input.location ?? '',
      updatedUnix: this.clock.nowUnix(),
    };
    if (input.email) {
      if (!EMAIL.test(input.email)) throw new InvalidInputError(`e-mail invalid [email: ${input.email}]`);
      changes.email = input.email;
    }
    if (input.visibility) changes.visibility = parseVisibility(input.visibility);
    if (input.repoAdminChangeTeamAccess !== undefined) changes.repoAdminChangeTeamAccess = input.repoAdminChangeTeamAccess;
    await this.transactions.run(async (tx) => {
      await this.userStore.update(tx, org.id, changes);
      const fields = Object.keys(changes).filter((key) => key !== 'updatedUnix');
      await this.audit.record(tx, {
        action: 'organization.edit',
        target: orgTarget(org),
        detail: { fields, ...(input.visibility ? { visibility: input.visibility } : {}) },
      });
    });
    return (await this.userStore.findById(org.id))!;
  }

  /**
   * GET /user/orgs and GET /users/{username}/orgs: the caller themselves and site admins see every
   * organisation of the user; anyone else only public organisations where the membership is public.
   */
  async organizationsOf(viewer: AuthContext, username: string | null, page: PageQuery): Promise<Page<UserEntity>> {
    requireSignedIn(viewer);
    const user = username === null ? viewer.user : await this.users.byName(username);
    if (username !== null) await this.visibility.assertVisible(viewer, user);
    const includePrivate = viewer.isAdmin || viewer.user.id === user.id;
    return this.organizations.listOrganizationsOf(user.id, includePrivate, page);
  }

  /**
   * GET /users/{username}/orgs/{org}/permissions: what the user's teams grant in the organisation (nothing
   * for a non-member); 404 when the organisation is unknown or the user may not see it.
   */
  async permissionsOf(viewer: AuthContext, username: string, orgName: string): Promise<OrganizationPermissions> {
    requireSignedIn(viewer);
    const user = await this.users.byName(username);
    await this.visibility.assertVisible(viewer, user);
    const org = await this.userStore.findByName(orgName);
    if (!org || !org.isOrganization) throw new NotFoundError();
    // As Forgejo, the question is whether the named user (not the caller) can see the organisation.
    if (!(await this.visibility.canSee(new AuthContext(user, 'password', null), org))) throw new NotFoundError();
    const grants = await this.organizations.grantsOf(org.id, user.id);
    return {
      isOwner: grants.accessMode >= OWNER_ACCESS_MODE,
      isAdmin: grants.accessMode >= ADMIN_ACCESS_MODE,
      canWrite: grants.accessMode >= WRITE_ACCESS_MODE,
      canRead: grants.accessMode >= READ_ACCESS_MODE,
      canCreateRepository: grants.canCreateRepository,
    };
  }

  /** GET /admin/orgs: every organisation, by name. */
  listAll(page: PageQuery): Promise<Page<UserEntity>> {
    return this.userStore.listOrganizations(page);
  }

  /** The organisation of an owners-only /orgs/{org} route: visible (404), signed in (401), owner (403). */
  async ownedByName(viewer: AuthContext, name: string): Promise<UserEntity> {
    const org = await this.visibleByName(viewer, name);
    await this.assertOwner(viewer, org);
    return org;
  }

  /** DELETE /orgs/{org}: owners and site admins; refused while the organisation owns repositories. */
  async delete(viewer: AuthContext, name: string): Promise<void> {
    const org = await this.visibleByName(viewer, name);
    await this.assertOwner(viewer, org);
    await this.transactions.run(async (tx) => {
      const current = await this.userStore.findById(org.id, tx);
      if (!current) throw new NotFoundError();
      // Forgejo's ErrUserOwnRepos message, as for deleting a user who owns repositories.
      if (current.numRepos > 0) throw new InvalidInputError(`user still has ownership of repositories [uid: ${org.id}]`);
      await this.users.runDeletionCleanups(tx, current);
      await this.organizations.deleteOrganizationRows(tx, org.id);
      await this.userStore.delete(tx, org.id);
      await this.audit.record(tx, { action: 'organization.delete', target: orgTarget(org) });
    });
  }

  /** GET /orgs/{org}/members: every member for members and site admins; other callers see the public members. */
  async members(viewer: AuthContext, name: string, page: PageQuery): Promise<Page<UserEntity>> {
    const org = await this.visibleByName(viewer, name);
    requireSignedIn(viewer);
    const publicOnly = !(await this.policy.isMember(viewer, org.id));
    return this.organizations.listMembers(org.id, publicOnly, page);
  }

  /** GET /orgs/{org}/public_members: anyone who sees the organisation. */
  async publicMembers(viewer: AuthContext, name: string, page: PageQuery): Promise<Page<UserEntity>> {
    const org = await this.visibleByName(viewer, name);
    return this.organizations.listMembers(org.id, true, page);
  }

  /**
   * GET /orgs/{org}/members/{username}: members and site admins learn whether the user is a member (else
   * 404); a caller asking about themselves gets 404; anyone else gets the public-membership answer (Forgejo
   * redirects them to that check; answering it here gives the same result in one request).
   */
  async assertMember(viewer: AuthContext, name: string, username: string): Promise<void> {
    const org = await this.visibleByName(viewer, name);
    requireSignedIn(viewer);
    const user = await this.users.byName(username);
    const member = await this.policy.isMember(viewer, org.id);
    if (!member && viewer.is(user.id)) throw new NotFoundError();
    const found = member ? await this.organizations.isMember(org.id, user.id) : await this.organizations.isPublicMember(org.id, user.id);
    if (!found) throw new NotFoundError();
  }

  /** GET /orgs/{org}/public_members/{username}: 204 when the user's membership is public, else 404. */
  async assertPublicMember(viewer: AuthContext, name: string, username: string): Promise<void> {
    const org = await this.visibleByName(viewer, name);
    const user = await this.users.byName(username);
    if (!(await this.organizations.isPublicMember(org.id, user.id))) throw new NotFoundError();
  }

  /** PUT and DELETE /orgs/{org}/public_members/{username}: a member, for their own membership only (403). */
  async setMembershipPublic(viewer: AuthContext, name: string, username: string, isPublic: boolean): Promise<void> {
    const org = await this.visibleByName(viewer, name);
    await this.policy.assertMember(viewer, org.id);
    const user = await this.users.byName(username);
    if (!viewer.is(user.id)) throw new ForbiddenError(isPublic ? 'Cannot publicize another member' : 'Cannot conceal another member');
    await this.organizations.setMembershipPublic(org.id, user.id, isPublic);
  }

  /** DELETE /orgs/{org}/members/{username}: owners and site admins; removes the user from every team. */
  async removeMember(viewer: AuthContext, name: string, username: string): Promise<void> {
    const org = await this.visibleByName(viewer, name);
    await this.assertOwner(viewer, org);
    const user = await this.users.byName(username);
    await this.transactions.run(async (tx) => {
      assertKept(await this.organizations.removeFromOrganization(tx, org.id, user.id));
      await this.audit.record(tx, { action: 'team.member_remove', target: orgTarget(org), detail: { member: user.name, teams: 'all' } });
    });
  }

  private assertOwner(viewer: AuthContext, org: UserEntity): Promise<void> {
    return this.policy.assertOwner(viewer, org.id);
  }
}

/** Throwing inside the transaction rolls back the membership row that was already deleted. */
function assertKept(result: TeamRemoval): void {
  if (result === 'last-owner') throw new InvalidInputError(LAST_OWNER);
}

function orgTarget(org: UserEntity) {
  return { type: 'organization' as const, id: org.id, name: org.name };
}
