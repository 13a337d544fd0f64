import type { BranchProtectionView } from '../access/branch-protection-policy';
import type { CommitHeader, CommitWithChanges } from '../git/git-commits';
import type { RefInfo } from '../git/git-refs';
import type { TreeEntry } from '../git/git-trees';
import type { ContentUrls } from './content-repository';
import type {
  BranchWire,
  CommitMetaWire,
  CommitWire,
  ContentsWire,
  FileCommitWire,
  PayloadCommitVerificationWire,
  PayloadCommitWire,
  TagWire,
} from './content.wire';
import type { UserWire } from '../users/user.wire';

/** Every commit reads as unsigned: Anvil verifies no signatures yet (Forgejo's answer for unsigned commits). */
export const NOT_SIGNED: PayloadCommitVerificationWire = {
  verified: false,
  reason: 'gpg.error.not_signed_commit',
  signature: '',
  signer: null,
  payload: '',
};

/** Go's RFC 3339: a zero offset is written `Z`. */
export function gitTime(iso: string): string {
  return iso.replace(/\+00:00$/, 'Z');
}

/** Path segments escaped for URLs, slashes kept (Forgejo's util.PathEscapeSegments). */
export function escapePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

export function commitUrl(urls: ContentUrls, oid: string): string {
  return `${urls.api}/git/commits/${oid}`;
}

function commitMeta(urls: ContentUrls, oid: string, created: string): CommitMetaWire {
  return { url: commitUrl(urls, oid), sha: oid, created: gitTime(created) };
}

export function toPayloadCommit(urls: ContentUrls, commit: CommitHeader, usernames: Map<string, string>): PayloadCommitWire {
  return {
    id: commit.oid,
    message: commit.message,
    url: `${urls.html}/commit/${commit.oid}`,
    author: { name: commit.authorName, email: commit.authorEmail, username: usernames.get(commit.authorEmail.toLowerCase()) ?? '' },
    committer: { name: commit.committerName, email: commit.committerEmail, username: usernames.get(commit.committerEmail.toLowerCase()) ?? '' },
    verification: NOT_SIGNED,
    timestamp: gitTime(commit.committerDate),
    added: null,
    removed: null,
    modified: null,
  };
}

/** `protection`: what the access policy says of the branch's protection for this viewer. */
export function toBranchWire(urls: ContentUrls, ref: RefInfo, protection: BranchProtectionView, usernames: Map<string, string>): BranchWire {
  return {
    name: ref.ref.replace(/^refs\/heads\//, ''),
    commit: toPayloadCommit(urls, ref.commit, usernames),
    ...protection,
  };
}

export function toTagWire(urls: ContentUrls, ref: RefInfo): TagWire {
  const name = ref.ref.replace(/^refs\/tags\//, '');
  return {
    name,
    // A lightweight tag shows its commit's message, as Forgejo does.
    message: ref.tag ? ref.tag.message : ref.commit.message,
    id: ref.oid,
    commit: commitMeta(urls, ref.commit.oid, ref.commit.committerDate),
    zipball_url: `${urls.html}/archive/${escapePath(name)}.zip`,
    tarball_url: `${urls.html}/archive/${escapePath(name)}.tar.gz`,
    archive_download_count: { zip: 0, tar_gz: 0 },
  };
}

const CHANGE_STATUS: Record<string, string> = { A: 'added', D: 'removed', M: 'modified', T: 'modified' };

/** Forgejo's `Commit`; `users` maps lowercased e-mail addresses to the Anvil users who own them. */
export function toCommitWire(
  urls: ContentUrls,
  commit: CommitWithChanges,
  users: Map<string, UserWire>,
  options: { stat: boolean; files: boolean },
): CommitWire {
  const wire: CommitWire = {
    url: commitUrl(urls, commit.oid),
    sha: commit.oid,
    created: gitTime(commit.committerDate),
    html_url: `${urls.html}/commit/${commit.oid}`,
    commit: {
      url: commitUrl(urls, commit.oid),
      author: { name: commit.authorName, email: commit.authorEmail, date: gitTime(commit.authorDate) },
      committer: { name: commit.committerName, email: commit.committerEmail, date: gitTime(commit.committerDate) },
      message: commit.message,
      tree: { url: `${urls.api}/git/trees/${commit.tree}`, sha: commit.tree, created: gitTime(commit.committerDate) },
      verification: NOT_SIGNED,
    },
    author: users.get(commit.authorEmail.toLowerCase()) ?? null,
    committer: users.get(commit.committerEmail.toLowerCase()) ?? null,
    parents: commit.parents.map((parent) => ({ url: commitUrl(urls, parent), sha: parent, created: '' })),
  };
  if (options.files) wire.files = (commit.changes ?? []).map((change) => ({ filename: change.path, status: CHANGE_STATUS[change.status] ?? 'modified' }));
  if (options.stat) {
    const additions = (commit.changes ?? []).reduce((sum, change) => sum + change.additions, 0);
    const deletions = (commit.changes ?? []).reduce((sum, change) => sum + change.deletions, 0);
    wire.stats = { total: additions + deletions, additions, deletions };
  }
  return wire;
}

export function toFileCommitWire(urls: ContentUrls, commit: CommitHeader): FileCommitWire {
  return {
    url: commitUrl(urls, commit.oid),
    sha: commit.oid,
    created: gitTime(commit.committerDate),
    html_url: `${urls.html}/commit/${commit.oid}`,
    author: { name: commit.authorName, email: commit.authorEmail, date: gitTime(commit.authorDate) },
    committer: { name: commit.committerName, email: commit.committerEmail, date: gitTime(commit.committerDate) },
    parents: commit.parents.map((parent) => ({ url: commitUrl(urls, parent), sha: parent, created: '' })),
    message: commit.message,
    tree: { url: `${urls.api}/git/trees/${commit.tree}`, sha: commit.tree, created: gitTime(commit.committerDate) },
  };
}

export type ContentType = 'file' | 'dir' | 'symlink' | 'submodule';

export function contentType(entry: TreeEntry): ContentType {
  if (entry.type === 'tree') return 'dir';
  if (entry.type === 'commit') return 'submodule';
  return entry.mode === '120000' ? 'symlink' : 'file';
}

export interface ContentsDetail {
  lastCommit: string;
  /** Base64 content of a file, when inlined. */
  content: string | null;
  /** The target of a symlink. */
  target: string | null;
  submoduleUrl: string | null;
}

/** A revision as a caller named it: its kind decides the web URLs (`src/branch/…`, `src/tag/…`, `src/commit/…`). */
export interface NamedRef {
  name: string;
  kind: 'branch' | 'tag' | 'commit';
  commit: string;
}

/** Forgejo's `ContentsResponse` of one entry at `ref`. */
export function toContentsWire(urls: ContentUrls, ref: NamedRef, entry: TreeEntry, detail: ContentsDetail): ContentsWire {
  const type = contentType(entry);
  const path = escapePath(entry.path);
  const refQuery = encodeURIComponent(ref.name);
  const webRef = `${ref.kind}/${escapePath(ref.name)}`;
  const self = `${urls.api}/contents/${path}?ref=${refQuery}`;
  const git = type === 'dir' ? `${urls.api}/git/trees/${entry.oid}` : type === 'submodule' ? null : `${urls.api}/git/blobs/${entry.oid}`;
  const html = type === 'submodule' ? null : `${urls.html}/src/${webRef}/${path}`;
  const download = type === 'file' || type === 'symlink' ? `${urls.html}/raw/${webRef}/${path}` : null;
  return {
    name: entry.path.split('/').pop() ?? entry.path,
    path: entry.path,
    sha: entry.oid,
    last_commit_sha: detail.lastCommit,
    type,
    size: entry.size,
    encoding: detail.content === null ? null : 'base64',
    content: detail.content,
    target: detail.target,
    url: self,
    html_url: html,
    git_url: git,
    download_url: download,
    submodule_git_url: detail.submoduleUrl,
    _links: { self, git, html },
  };
}
