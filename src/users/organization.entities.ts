import { Entity, Index } from 'typeorm';
import { CounterColumn, FlagColumn, IdColumn, RefColumn, TextColumn } from '../database/columns';

/** Membership of a user in an organisation. */
@Entity('org_user')
@Index('IDX_org_user_uid_org_id', ['uid', 'orgId'], { unique: true })
@Index('IDX_org_user_org_id', ['orgId'])
export class OrgUserEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  uid: number;

  @RefColumn()
  orgId: number;

  @FlagColumn(false)
  isPublic: boolean;
}

/** Every organisation has its "Owners" team (authorize = owner), as Forgejo creates for every org. */
export const OWNER_ACCESS_MODE = 4;
/** Forgejo's other access modes, as `team.authorize` stores them. */
export const READ_ACCESS_MODE = 1;
export const WRITE_ACCESS_MODE = 2;
export const ADMIN_ACCESS_MODE = 3;

@Entity('team')
@Index('IDX_team_org_id_lower_name', ['orgId', 'lowerName'], { unique: true })
export class TeamEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  orgId: number;

  @TextColumn(255)
  lowerName: string;

  @TextColumn(255)
  name: string;

  @TextColumn(255)
  description: string;

  @CounterColumn()
  authorize: number;

  @FlagColumn(false)
  includesAllRepositories: boolean;

  @FlagColumn(false)
  canCreateOrgRepo: boolean;

  @CounterColumn()
  numMembers: number;

  /** The team's mode per unit, as JSON (`{"repo.code":2}`); empty for the Owners team, which has every unit. */
  @TextColumn(1024)
  units: string;
}

/** A repository a team reaches (teams that include all repositories have no rows here). */
@Entity('team_repo')
@Index('IDX_team_repo_team_id_repo_id', ['teamId', 'repoId'], { unique: true })
@Index('IDX_team_repo_repo_id', ['repoId'])
export class TeamRepoEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  orgId: number;

  @RefColumn()
  teamId: number;

  @RefColumn()
  repoId: number;
}

@Entity('team_user')
@Index('IDX_team_user_team_id_uid', ['teamId', 'uid'], { unique: true })
@Index('IDX_team_user_uid_org_id', ['uid', 'orgId'])
export class TeamUserEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  orgId: number;

  @RefColumn()
  teamId: number;

  @RefColumn()
  uid: number;
}
