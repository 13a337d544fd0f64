import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { TeamEntity } from './organization.entities';
import { OrganizationStore, TeamRemoval } from './organization.store';
import { UserEntity } from './user.entity';

export type { TeamRemoval } from './organization.store';

/**
 * What other modules read and change of organisation and team membership (the teams API, OAuth2 claims,
 * repository lists). Each method is the one call of OrganizationStore it delegates to, returned as it is.
 */
@Injectable()
export class OrganizationMemberships {
  constructor(private readonly store: OrganizationStore) {}

  /** The organisations `uid` belongs to, by name (see OrganizationStore.listOrganizationsOf). */
  organizationsOf(uid: number, includePrivate: boolean, page: PageQuery): Promise<Page<UserEntity>> {
    return this.store.listOrganizationsOf(uid, includePrivate, page);
  }

  /** Ids of the organisations where `uid` is an owner. */
  ownedOrgIds(uid: number): Promise<number[]> {
    return this.store.ownedOrgIds(uid);
  }

  addTeamMember(tx: EntityManager, team: TeamEntity, uid: number): Promise<boolean> {
    return this.store.addTeamMember(tx, team, uid);
  }

  removeTeamMember(tx: EntityManager, team: TeamEntity, uid: number): Promise<TeamRemoval> {
    return this.store.removeTeamMember(tx, team, uid);
  }

  removeAllTeamMembers(tx: EntityManager, team: TeamEntity): Promise<void> {
    return this.store.removeAllTeamMembers(tx, team);
  }
}
