import type { AuthContext } from '../auth/auth-context';
import { formatTime } from '../common/time';
import type { Site } from '../common/site-urls';
import { toUserWire } from '../users/user.mapper';
import type { UserEntity } from '../users/user.entity';
import type { StoredPackageFile, VersionOfPackage } from './package.store';
import type { PackageFileWire, PackageWire } from './package.wire';

/** `{ROOT_URL}{owner}/-/packages/{type}/{name}/{version}`, as Forgejo's web view. */
export function packageVersionHtmlUrl(owner: UserEntity, found: VersionOfPackage, site: Site): string {
  const path = [owner.name, '-', 'packages', found.pkg.type, found.pkg.name, found.version.version].map(encodeURIComponent).join('/');
  return `${site.rootUrl}${path}`;
}

export function toPackageWire(owner: UserEntity, creator: UserEntity, found: VersionOfPackage, viewer: AuthContext, site: Site): PackageWire {
  return {
    id: found.version.id,
    owner: toUserWire(owner, viewer, site),
    repository: null,
    creator: toUserWire(creator, viewer, site),
    type: found.pkg.type,
    name: found.pkg.name,
    version: found.version.version,
    html_url: packageVersionHtmlUrl(owner, found, site),
    created_at: formatTime(found.version.createdUnix),
  };
}

export function toPackageFileWire({ file, blob }: StoredPackageFile): PackageFileWire {
  return { id: file.id, Size: blob.size, name: file.name, md5: blob.md5, sha1: blob.sha1, sha256: blob.sha256, sha512: blob.sha512 };
}
