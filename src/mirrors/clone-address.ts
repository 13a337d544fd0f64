import { InvalidInputError } from '../common/errors';

const ALLOWED_SCHEMES = new Set(['http:', 'https:', 'git:']);

/**
 * The `clone_addr` rules, in the order docs/mirrors.md lists them. Returns the URL git will be given: the
 * WHATWG-normalised form, so that the host the policy judges is exactly the host git connects to.
 */
export function parseCloneAddress(raw: string): URL {
  const address = raw.trim();
  if (/^(https?|git):\/\//i.test(address)) {
    let url: URL;
    try {
      url = new URL(address);
    } catch {
      throw invalidUrl(address);
    }
    if (!ALLOWED_SCHEMES.has(url.protocol) || url.hostname === '') throw invalidUrl(address);
    if (url.username !== '' || url.password !== '') throw new InvalidInputError('The URL contains credentials.');
    url.hash = '';
    return url;
  }
  // scp-like `user@host:path` is ssh in disguise.
  const scpLike = /^[^\s/@:]+@([^\s/:]+):/.exec(address);
  if (scpLike) throw protocolNotAllowed(scpLike[1]);
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(address);
  // `C:\…` would be a Windows path: a local path, like anything without a scheme.
  if (scheme && scheme[1].toLowerCase() !== 'file' && scheme[1].length > 1) {
    let host = '';
    try {
      host = new URL(address).host;
    } catch {
      // An unparsable address of another scheme has no host to name.
    }
    throw protocolNotAllowed(host);
  }
  throw new InvalidInputError('You are not allowed to import local repositories.');
}

function invalidUrl(address: string): InvalidInputError {
  return new InvalidInputError(`migration/cloning from '${address}' is not allowed: the provided url is invalid`);
}

function protocolNotAllowed(host: string): InvalidInputError {
  return new InvalidInputError(`migration/cloning from '${host}' is not allowed: the provided url protocol is not allowed`);
}

/** Forgejo's SanitizeCredentialURLs: `scheme://user:pass@` becomes `scheme://sanitized-credential@` anywhere in a text. */
export function sanitizeCredentialUrls(text: string): string {
  return text.replace(/([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^\s/@]+@/g, '$1sanitized-credential@');
}
