import type { AuthContext } from '../auth/auth-context';
import { formatTime } from '../common/time';
import type { RepositoryEntity } from '../repos/repository.entity';
import { toUserWire, type SiteUrls } from '../users/user.mapper';
import type { UserEntity } from '../users/user.entity';
import type { AttachmentEntity, ReleaseEntity } from './release.entities';
import type { AttachmentWire, ReleaseWire } from './release.wire';

/** Where a release lives: its repository and the repository's owner. */
export interface ReleasePlace {
  owner: UserEntity;
  repo: RepositoryEntity;
}

const segment = (text: string) => encodeURIComponent(text);

export function releaseUrls(place: ReleasePlace, release: ReleaseEntity, site: SiteUrls) {
  const web = `${site.rootUrl}${segment(place.owner.name)}/${segment(place.repo.name)}`;
  const api = `${site.rootUrl}api/v1/repos/${segment(place.owner.name)}/${segment(place.repo.name)}/releases/${release.id}`;
  const tag = release.tagName.split('/').map(segment).join('/');
  return { web, api, html: `${web}/releases/tag/${tag}`, archive: `${web}/archive/${tag}`, download: `${web}/releases/download/${tag}/` };
}

/** Pure: `Attachment` JSON; release attachments download from `/releases/download/{tag}/{name}` (as Forgejo). */
export function toAttachmentWire(place: ReleasePlace, release: ReleaseEntity, attachment: AttachmentEntity, site: SiteUrls): AttachmentWire {
  return {
    id: attachment.id,
    name: attachment.name,
    size: attachment.size,
    download_count: attachment.downloadCount,
    created_at: formatTime(attachment.createdUnix),
    uuid: attachment.uuid,
    browser_download_url: `${releaseUrls(place, release, site).download}${segment(attachment.name)}`,
    type: 'attachment',
  };
}

/** Pure: `Release` JSON for a viewer. Archive links are empty when the release hides them (as Forgejo). */
export function toReleaseWire(
  place: ReleasePlace,
  release: ReleaseEntity,
  publisher: UserEntity,
  attachments: AttachmentEntity[],
  viewer: AuthContext,
  site: SiteUrls,
): ReleaseWire {
  const urls = releaseUrls(place, release, site);
  return {
    id: release.id,
    tag_name: release.tagName,
    target_commitish: release.target,
    name: release.title,
    body: release.note,
    url: urls.api,
    html_url: urls.html,
    tarball_url: release.hideArchiveLinks ? '' : `${urls.archive}.tar.gz`,
    zipball_url: release.hideArchiveLinks ? '' : `${urls.archive}.zip`,
    hide_archive_links: release.hideArchiveLinks,
    upload_url: `${urls.api}/assets`,
    draft: release.isDraft,
    prerelease: release.isPrerelease,
    created_at: formatTime(release.createdUnix),
    published_at: formatTime(release.createdUnix),
    author: toUserWire(publisher, viewer, site, { seesRepository: viewer.isSignedIn }),
    assets: attachments.map((attachment) => toAttachmentWire(place, release, attachment, site)),
    archive_download_count: { tar_gz: 0, zip: 0 },
  };
}
