import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { AuthContext } from '../auth/auth-context';
import { hashPassword } from '../auth/secrets';
import { BadRequestError, InvalidInputError, NotFoundError } from '../common/errors';
import { EMAIL, isHttpUrl } from '../common/fields';
import { Clock } from '../common/time';
import { isUniqueViolation, Transactions } from '../database/transactions';
import { parseVisibility, UserEntity, UserType, Visibility } from './user.entity';
import { assertUsableUserName, USERNAME } from './user-names';
import { currentActor } from '../audit/audit-context';
import type { AuditDetail } from '../audit/audit-event';
import { LifecycleEvents } from '../events/lifecycle-events';
import { AuditService } from '../audit/audit.service';
import { OrganizationStore } from './organization.store';
import { UserStore } from './user.store';

export const MIN_PASSWORD_LENGTH = 8;

export interface NewUser {
  username: string;
  email: string;
  password: string;
  fullName?: string;
  mustChangePassword?: boolean;
  restricted?: boolean;
  visibility?: string;
  isAdmin?: boolean;
  createdUnix?: number;
}

export interface UserChanges {
  email?: string;
  fullName?: string;
  password?: string;
  website?: string;
  location?: string;
  description?: string;
  visibility?: string;
  mustChangePassword?: boolean;
  active?: boolean;
  admin?: boolean;
  prohibitLogin?: boolean;
  restricted?: boolean;
  allowCreateOrganization?: boolean;
  hideEmail?: boolean;
}

/** Accounts: creation (admin API and CLI), changes, deletion, lookups. */
@Injectable()
export class UsersService {
  constructor(
    private readonly users: UserStore,
    private readonly organizations: OrganizationStore,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly events: LifecycleEvents,
  ) {}

  /**
   * What other modules keep about a user or organisation about to be deleted goes, inside the deleting
   * transaction (the `user.deleted` subscribers; organisation deletion lives in OrganizationsService).
   */
  async runDeletionCleanups(tx: EntityManager, user: UserEntity): Promise<void> {
    await this.events.emit('user.deleted', { tx, user });
  }

  /** A user or organisation by name; unknown → 404. */
  async byName(name: string): Promise<UserEntity> {
    const user = await this.users.findByName(name);
    if (!user) throw new NotFoundError();
    return user;
  }

  /** An individual user by name (not an organisation); unknown → 404. */
  async individualByName(name: string): Promise<UserEntity> {
    const user = await this.users.findByName(name);
    if (!user || user.isOrganization) throw new NotFoundError();
    return user;
  }

  async create(input: NewUser): Promise<UserEntity> {
    assertUsableUserName(input.username);
    if ([...input.password].length < MIN_PASSWORD_LENGTH) throw new BadRequestError('PasswordIsRequired');
    const visibility = input.visibility === undefined ? Visibility.Public : parseVisibility(input.visibility);
    if (visibility === undefined) throw new InvalidInputError('[Visibility]: In');
    const passwdHash = await hashPassword(input.password);
    const now = this.clock.nowUnix();
    try {
      return await this.transactions.run(async (tx) => {
        if (await this.users.nameTaken(input.username, tx)) throw new InvalidInputError(`user already exists [name: ${input.username}]`);
        if ((await this.users.emailOwnerId(input.email, tx)) !== null) throw new InvalidInputError(`e-mail already in use [email: ${input.email}]`);
        const created = await this.users.insert(tx, {
          name: input.username,
          lowerName: input.username.toLowerCase(),
          fullName: input.fullName ?? '',
          email: input.email,
          passwdHash,
          mustChangePassword: input.mustChangePassword ?? true,
          isRestricted: input.restricted ?? false,
          visibility,
          isAdmin: input.isAdmin ?? false,
          isActive: true,
          type: UserType.Individual,
          createdUnix: input.createdUnix ?? now,
          updatedUnix: now,
        });
        await this.audit.record(tx, {
          action: 'user.create',
          target: userTarget(created),
          detail: { admin: created.isAdmin, restricted: created.isRestricted },
        });
        return created;
      });
    } catch (error) {
      // A concurrent creation won the race for the name or the address.
      if (isUniqueViolation(error)) throw new InvalidInputError(`user already exists [name: ${input.username}]`);
      throw error;
    }
  }

  /**
   * An account the gateway vouches for (REVERSE_PROXY_AUTO_REGISTRATION): no password (it signs in through the
   * gateway, or with tokens), active at once; the first account of the site is its administrator, as Forgejo.
   * A concurrent first request that created the same name wins, and its account is answered.
   */
  async registerFromGateway(input: { username: string; email: string; fullName: string; address: string }): Promise<UserEntity> {
    if (!USERNAME.test(input.username)) throw new InvalidInputError(`invalid user name [name: ${input.username}]`);
    assertUsableUserName(input.username);
    if (!EMAIL.test(input.email)) throw new InvalidInputError(`e-mail invalid [email: ${input.email}]`);
    const now = this.clock.nowUnix();
    try {
      return await this.transactions.run(async (tx) => {
        const existing = await this.users.findByName(input.username, tx);
        if (existing) return existing;
        if ((await this.users.emailOwnerId(input.email, tx)) !== null) throw new InvalidInputError(`e-mail already in use [email: ${input.email}]`);
        const first = (await this.users.countIndividuals(tx)) === 0;
        const created = await this.users.insert(tx, {
          name: input.username,
          lowerName: input.username.toLowerCase(),
          fullName: input.fullName,
          email: input.email,
          passwdHash: '',
          mustChangePassword: false,
          isRestricted: false,
          visibility: Visibility.Public,
          isAdmin: first,
          isActive: true,
          type: UserType.Individual,
          createdUnix: now,
          updatedUnix: now,
        });
        // The gateway vouched for the user: they are the actor of their own registration.
        const actor = { id: created.id, name: created.name, address: currentActor()?.address ?? input.address };
        await this.audit.record(tx, { action: 'user.register', actor, target: userTarget(created), detail: { admin: created.isAdmin, via: 'reverse-proxy' } });
        return created;
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const winner = await this.users.findByName(input.username);
      if (!winner) throw new InvalidInputError(`user already exists [name: ${input.username}]`);
      return winner;
    }
  }

  /** Is the user table still empty of individuals? The CLI's first user needs no password change. */
  async noUsersYet(): Promise<boolean> {
    return (await this.users.countIndividuals()) === 0;
  }

  /** Every account, oldest first (the CLI's `admin user list`). */
  listIndividuals(): Promise<UserEntity[]> {
    return this.users.listIndividuals();
  }

  async edit(name: string, changes: UserChanges): Promise<UserEntity> {
    const user = await this.individualByName(name);
    const update: Partial<UserEntity> = {};
    if (changes.password !== undefined && changes.password !== '') {
      if ([...changes.password].length < MIN_PASSWORD_LENGTH) throw new BadRequestError(`password must be at least ${MIN_PASSWORD_LENGTH} characters`);
      update.passwdHash = await hashPassword(changes.password);
    }
    if (changes.website !== undefined) {
      if (changes.website !== '' && !isHttpUrl(changes.website)) throw new InvalidInputError('[Website]: ValidUrl');
      update.website = changes.website;
    }
    if (changes.visibility !== undefined) {
      const visibility = parseVisibility(changes.visibility);
      if (visibility === undefined) throw new InvalidInputError('[Visibility]: In');
      update.visibility = visibility;
    }
    if (changes.email !== undefined && changes.email !== '' && !EMAIL.test(changes.email)) {
      throw new BadRequestError(`e-mail invalid [email: ${changes.email}]`);
    }
    assign(update, 'fullName', changes.fullName);
    assign(update, 'location', changes.location);
    assign(update, 'description', changes.description);
    assign(update, 'mustChangePassword', changes.mustChangePassword);
    assign(update, 'isActive', changes.active);
    assign(update, 'isAdmin', changes.admin);
    assign(update, 'prohibitLogin', changes.prohibitLogin);
    assign(update, 'isRestricted', changes.restricted);
    assign(update, 'allowCreateOrganization', changes.allowCreateOrganization);
    assign(update, 'keepEmailPrivate', changes.hideEmail);
    update.updatedUnix = this.clock.nowUnix();
    await this.transactions.run(async (tx) => {
      if (changes.admin === false && user.isAdmin && (await this.users.countAdmins(tx)) <= 1) {
        throw new BadRequestError(`can not delete the last admin user [uid: ${user.id}]`);
      }
      if (changes.email !== undefined && changes.email !== '' && changes.email.toLowerCase() !== user.email.toLowerCase()) {
        const owner = await this.users.emailOwnerId(changes.email, tx);
        if (owner !== null && owner !== user.id) throw new BadRequestError(`e-mail already in use [email: ${changes.email}]`);
        await this.users.replacePrimaryEmail(tx, user.id, changes.email);
        update.email = changes.email;
      }
      await this.users.update(tx, user.id, update);
      await this.audit.record(tx, { action: 'user.edit', target: userTarget(user), detail: editedFields(update) });
    });
    return (await this.users.findById(user.id))!;
  }

  async delete(viewer: AuthContext, name: string): Promise<void> {
    const user = await this.users.findByName(name);
    if (!user) throw new NotFoundError();
    if (user.isOrganization) throw new InvalidInputError(`user is an organization [name: ${user.name}]`);
    if (viewer.is(user.id)) throw new InvalidInputError('you cannot delete yourself');
    if (user.numRepos > 0) throw new InvalidInputError(`user still has ownership of repositories [uid: ${user.id}]`);
    await this.transactions.run(async (tx) => {
      if (user.isAdmin && (await this.users.countAdmins(tx)) <= 1) {
        throw new BadRequestError(`can not delete the last admin user [uid: ${user.id}]`);
      }
      // As Forgejo: leave organisations first, so that none is left without its last owner.
      if ((await this.organizations.countOrgsOfMember(user.id, tx)) > 0) {
        throw new InvalidInputError(`user still has membership of organizations [uid: ${user.id}]`);
      }
      await this.runDeletionCleanups(tx, user);
      await this.users.delete(tx, user.id);
      await this.audit.record(tx, { action: 'user.delete', target: userTarget(user) });
    });
  }
}

function assign<K extends keyof UserEntity>(update: Partial<UserEntity>, key: K, value: UserEntity[K] | undefined): void {
  if (value !== undefined && value !== null) update[key] = value;
}

function userTarget(user: UserEntity) {
  return { type: 'user' as const, id: user.id, name: user.name };
}

/** What an edit changed, for the audit log: the fields' names, and the new value of each access flag. */
function editedFields(update: Partial<UserEntity>): AuditDetail {
  const names: Partial<Record<keyof UserEntity, string>> = {
    passwdHash: 'password',
    website: 'website',
    visibility: 'visibility',
    email: 'email',
    fullName: 'full_name',
    location: 'location',
    description: 'description',
    mustChangePassword: 'must_change',
    isActive: 'active',
    isAdmin: 'admin',
    prohibitLogin: 'prohibit_login',
    isRestricted: 'restricted',
    allowCreateOrganization: 'allow_create_organization',
    keepEmailPrivate: 'hide_email',
  };
  const detail: AuditDetail = { fields: Object.keys(update).flatMap((key) => names[key as keyof UserEntity] ?? []) };
  for (const key of ['isActive', 'isAdmin', 'prohibitLogin', 'isRestricted', 'mustChangePassword'] as const) {
    if (update[key] !== undefined) detail[names[key]!] = update[key]!;
  }
  return detail;
}
