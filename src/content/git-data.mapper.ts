import type { RefObject, TagObject, TreeListingEntry } from '../git/git-data';
import { escapePath, NOT_SIGNED } from './content.mapper';
import type { ContentUrls } from './content-repository';
import type { AnnotatedTagWire, GitEntryWire, ReferenceWire } from './git-data.wire';

/** Pure: a ref as Forgejo's `Reference`; the object's URL is the git data route of its type. */
export function toReferenceWire(urls: ContentUrls, ref: RefObject): ReferenceWire {
  return {
    ref: ref.ref,
    url: `${urls.api}/git/${escapePath(ref.ref)}`,
    object: { type: ref.type, sha: ref.sha, url: `${urls.api}/git/${encodeURIComponent(ref.type)}s/${ref.sha}` },
  };
}

/** `2024-05-01T10:00:00+02:00` from Unix seconds and a git offset (`+0200`); `Z` for UTC, as Go writes it. */
export function taggerTime(unix: number, offset: string): string {
  const sign = offset.startsWith('-') ? -1 : 1;
  const minutes = sign * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(3, 5)));
  const local = new Date((unix + minutes * 60) * 1000).toISOString().slice(0, 19);
  if (minutes === 0) return `${local}Z`;
  return `${local}${offset.slice(0, 3)}:${offset.slice(3, 5)}`;
}

/** Pure: Forgejo's `AnnotatedTag`; Anvil does not verify signatures, so it reads as not signed. */
export function toAnnotatedTagWire(urls: ContentUrls, tag: TagObject): AnnotatedTagWire {
  return {
    tag: tag.name,
    sha: tag.sha,
    url: `${urls.api}/git/tags/${tag.sha}`,
    message: tag.message,
    tagger: { name: tag.taggerName, email: tag.taggerEmail, date: taggerTime(tag.taggerUnix, tag.taggerOffset) },
    object: {
      type: tag.objectType,
      url: `${urls.api}/git/${tag.objectType === 'commit' ? 'commits' : `${tag.objectType}s`}/${tag.objectSha}`,
      sha: tag.objectSha,
    },
    verification: NOT_SIGNED,
  };
}

/** Pure: one tree entry; trees link to git/trees, blobs to git/blobs, submodules to nothing (as Forgejo). */
export function toGitEntryWire(urls: ContentUrls, entry: TreeListingEntry): GitEntryWire {
  const url = entry.type === 'tree' ? `${urls.api}/git/trees/${entry.sha}` : entry.type === 'blob' ? `${urls.api}/git/blobs/${entry.sha}` : '';
  return { path: entry.path, mode: entry.mode, type: entry.type, size: entry.size, sha: entry.sha, url };
}
