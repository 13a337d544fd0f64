import type { AuthContext } from '../auth/auth-context';
import { formatTime } from '../common/time';
import type { RepositoryEntity } from '../repos/repository.entity';
import type { Site } from '../common/site-urls';
import { toUserWire } from '../users/user.mapper';
import type { UserEntity } from '../users/user.entity';
import type { AttachmentEntity, ReleaseEntity } from './release.entities';
import type { AttachmentWire, ReleaseWire } from './release.wire';

/** Where a release lives: its repository and the repository's owner. */
export interface ReleasePlace {
  owner: UserEntity;
  repo: RepositoryEntity;
}

const segment = (text: string) => encodeURIComponent(text);

/**
 * The URLs of a release, as Forgejo builds them: the web pages and archives under `{ROOT_URL}{owner}/{repo}`
 * (Anvil serves them: release-pages.controller.ts), the API under `{ROOT_URL}api/v1`. The tag's `/` stays a
 * path separator in the page and archive URLs, and is escaped in a download URL, whose tag is one segment.
 */
export function releaseUrls(place: ReleasePlace, release: ReleaseEntity, site: Site) {
  const web = `${site.rootUrl}${segment(place.owner.name)}/${segment(place.repo.name)}`;
  const api = `${site.rootUrl}api/v1/repos/${segment(place.owner.name)}/${segment(place.repo.name)}/releases/${release.id}`;
  const tag = release.tagName.split('/').map(segment).join('/');
  return { web, api, html: `${web}/releases/tag/${tag}`, archive: `${web}/archive/${tag}`, download: `${web}/releases/download/${segment(release.tagName)}/` };
}

/** Where an attachment downloads from: its own link when external, else by uuid (Forgejo's attachment answers). */
function downloadUrl(attachment: AttachmentEntity, site: Site): string {
  return attachment.externalUrl || `${site.rootUrl}attachments/${segment(attachment.uuid)}`;
}

/**
 * Pure: `Attachment` JSON. `byName` is the release's `/releases/download/{tag}/` prefix, given when the release's
 * attachments are listed and their names are unique (Forgejo's "predictable URLs"); else the uuid URL.
 */
export function toAttachmentWire(attachment: AttachmentEntity, site: Site, byName?: string): AttachmentWire {
  return {
    id: attachment.id,
    name: attachment.name,
    size: attachment.size,
    download_count: attachment.downloadCount,
    created_at: formatTime(attachment.createdUnix),
    uuid: attachment.uuid,
    browser_download_url: attachment.externalUrl || !byName ? downloadUrl(attachment, site) : `${byName}${segment(attachment.name)}`,
    type: attachment.externalUrl ? 'external' : 'attachment',
  };
}

/** Pure: a release's attachments as Forgejo lists them (with the release, or GET …/assets). */
export function toAttachmentWires(place: ReleasePlace, release: ReleaseEntity, attachments: AttachmentEntity[], site: Site): AttachmentWire[] {
  const unique = new Set(attachments.map((attachment) => attachment.name)).size === attachments.length;
  const byName = unique ? releaseUrls(place, release, site).download : undefined;
  return attachments.map((attachment) => toAttachmentWire(attachment, site, byName));
}

/**
 * Pure: `Release` JSON for a viewer. The archive URLs are given even when `hide_archive_links` is set: as in
 * Forgejo's API, that flag only tells pages (ours: release-pages.controller.ts) not to show them.
 */
export function toReleaseWire(
  place: ReleasePlace,
  release: ReleaseEntity,
  publisher: UserEntity,
  attachments: AttachmentEntity[],
  viewer: AuthContext,
  site: Site,
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
    tarball_url: `${urls.archive}.tar.gz`,
    zipball_url: `${urls.archive}.zip`,
    hide_archive_links: release.hideArchiveLinks,
    upload_url: `${urls.api}/assets`,
    draft: release.isDraft,
    prerelease: release.isPrerelease,
    created_at: formatTime(release.createdUnix),
    published_at: formatTime(release.createdUnix),
    author: toUserWire(publisher, viewer, site, { seesRepository: viewer.isSignedIn }),
    assets: toAttachmentWires(place, release, attachments, site),
    archive_download_count: { tar_gz: 0, zip: 0 },
  };
}
