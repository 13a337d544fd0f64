import { AccessMode } from '../access/access-mode';
import type { AuthContext } from '../auth/auth-context';
import { formatTime } from '../common/time';
import { repositoryUrls, toRepositoryWire } from '../repos/repository.mapper';
import type { RepositoryEntity } from '../repos/repository.entity';
import type { Site } from '../common/site-urls';
import type { UserEntity } from '../users/user.entity';
import type { DeployKeyEntity } from './deploy-key.entity';
import type { DeployKeyWire } from './deploy-key.wire';

/** A deploy key with what its JSON needs: its repository, that repository's owner, and its material's id. */
export interface PlacedDeployKey {
  key: DeployKeyEntity;
  materialId: number;
  repo: RepositoryEntity;
  owner: UserEntity;
}

/**
 * Pure: the key as `viewer` may see it. As Forgejo, `repository` (with the key's own mode as its permissions)
 * only for a site admin or the user who owns the repository, and only when `withRepository` (lists and single
 * keys; not the answer to a creation).
 */
export function toDeployKeyWire({ key, materialId, repo, owner }: PlacedDeployKey, viewer: AuthContext, site: Site, withRepository: boolean): DeployKeyWire {
  const readOnly = key.mode === AccessMode.Read;
  const wire: DeployKeyWire = {
    id: key.id,
    key_id: materialId,
    key: key.content,
    url: `${repositoryUrls(owner, repo, site).api}/keys/${key.id}`,
    title: key.name,
    fingerprint: key.fingerprint,
    created_at: formatTime(key.createdUnix),
    read_only: readOnly,
  };
  if (withRepository && (viewer.isAdmin || viewer.is(owner.id))) {
    wire.repository = toRepositoryWire(repo, owner, viewer, { admin: false, push: !readOnly, pull: true }, site);
  }
  return wire;
}
