import { Column, Entity, Index } from 'typeorm';
import { CounterColumn, FlagColumn, IdColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/** Organisations are users of another type, as in Forgejo: they share the namespace and the table. */
export enum UserType {
  Individual = 0,
  Organization = 1,
}

export enum Visibility {
  Public = 0,
  Limited = 1,
  Private = 2,
}

export const VISIBILITY_NAMES: Record<Visibility, 'public' | 'limited' | 'private'> = {
  [Visibility.Public]: 'public',
  [Visibility.Limited]: 'limited',
  [Visibility.Private]: 'private',
};

export function parseVisibility(name: string): Visibility | undefined {
  const entry = Object.entries(VISIBILITY_NAMES).find(([, value]) => value === name);
  return entry ? (Number(entry[0]) as Visibility) : undefined;
}

@Entity('user')
@Index('IDX_user_lower_name', ['lowerName'], { unique: true })
@Index('IDX_user_type_created', ['type', 'createdUnix'])
@Index('IDX_user_type_updated', ['type', 'updatedUnix'])
export class UserEntity {
  @IdColumn()
  id: number;

  @TextColumn(40)
  lowerName: string;

  @TextColumn(40)
  name: string;

  @TextColumn(255)
  fullName: string;

  @TextColumn(255)
  email: string;

  @FlagColumn(false)
  keepEmailPrivate: boolean;

  /** scrypt hash in PHC-like form; empty for organisations and users without a password. */
  @TextColumn(255)
  passwdHash: string;

  @FlagColumn(false)
  mustChangePassword: boolean;

  @Column({ type: 'integer', default: UserType.Individual })
  type: UserType;

  @TextColumn(255)
  location: string;

  @TextColumn(255)
  website: string;

  @TextColumn(255)
  description: string;

  @Column({ type: 'integer', default: Visibility.Public })
  visibility: Visibility;

  @FlagColumn(false)
  isAdmin: boolean;

  @FlagColumn(true)
  isActive: boolean;

  @FlagColumn(false)
  prohibitLogin: boolean;

  @FlagColumn(false)
  isRestricted: boolean;

  @FlagColumn(true)
  allowCreateOrganization: boolean;

  @CounterColumn()
  numFollowers: number;

  @CounterColumn()
  numFollowing: number;

  @CounterColumn()
  numStars: number;

  @CounterColumn()
  numRepos: number;

  @UnixTimeColumn()
  createdUnix: number;

  @UnixTimeColumn()
  updatedUnix: number;

  /** Organisations only: Forgejo's `repo_admin_change_team_access` setting, stored and echoed. */
  @FlagColumn(false)
  repoAdminChangeTeamAccess: boolean;

  get isOrganization(): boolean {
    return this.type === UserType.Organization;
  }
}
