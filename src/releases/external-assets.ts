import { BadRequestError } from '../common/errors';

// The links of external release assets (Forgejo's IsValidReleaseAssetURL) and the names they give an asset.

/** An external asset's link: an absolute http(s) URL (Forgejo's IsValidReleaseAssetURL) that fits its column, else 400. */
export function releaseAssetUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new BadRequestError(`invalid external URL: '${text}'`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '' || url.href.length > 2048) {
    throw new BadRequestError(`invalid external URL: '${text}'`);
  }
  return url;
}

/** The stored link of an external asset as an absolute http(s) URL, or null when it is not one. */
export function externalLink(stored: string): string | null {
  try {
    return releaseAssetUrl(stored).href;
  } catch {
    return null;
  }
}

/** Forgejo names an unnamed external asset after the link's last path segment, else its host. */
export function externalName(url: URL): string {
  const segments = url.pathname.split('/').filter((part) => part !== '');
  const last = segments.length > 0 ? segments[segments.length - 1] : '';
  try {
    return decodeURIComponent(last) || url.host;
  } catch {
    return last || url.host;
  }
}
