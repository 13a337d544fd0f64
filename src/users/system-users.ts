import { UserEntity, UserType, Visibility } from './user.entity';

/** Forgejo's two synthetic users; they exist in no table and appear only in `/users/search?uid=`. */
export const GHOST_USER_ID = -1;
export const ACTIONS_USER_ID = -2;

/** The synthetic user with this id, as Forgejo builds it (NewGhostUser / NewActionsUser), or undefined. */
export function systemUser(id: number): UserEntity | undefined {
  if (id === GHOST_USER_ID) return synthetic({ id, name: 'Ghost', isActive: false });
  if (id === ACTIONS_USER_ID) {
    return synthetic({
      id,
      name: 'forgejo-actions',
      fullName: 'Forgejo Actions',
      email: 'noreply@forgejo.org',
      keepEmailPrivate: true,
      isActive: true,
    });
  }
  return undefined;
}

function synthetic(fields: Partial<UserEntity> & { id: number; name: string }): UserEntity {
  return Object.assign(new UserEntity(), {
    lowerName: fields.name.toLowerCase(),
    fullName: '',
    email: '',
    keepEmailPrivate: false,
    passwdHash: '',
    mustChangePassword: false,
    type: UserType.Individual,
    location: '',
    website: '',
    description: '',
    visibility: Visibility.Public,
    isAdmin: false,
    prohibitLogin: false,
    isRestricted: false,
    allowCreateOrganization: false,
    numFollowers: 0,
    numFollowing: 0,
    numStars: 0,
    numRepos: 0,
    createdUnix: 0,
    updatedUnix: 0,
    repoAdminChangeTeamAccess: false,
    ...fields,
  });
}
