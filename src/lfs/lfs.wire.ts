/** The JSON of the Git LFS batch API (media type application/vnd.git-lfs+json), with its exact field names. */

export const LFS_MEDIA_TYPE = 'application/vnd.git-lfs+json';

/** What a client may be told to do with one object: where, with which headers. */
export interface LfsLinkWire {
  href: string;
  header?: Record<string, string>;
  expires_in?: number;
}

export interface LfsObjectErrorWire {
  code: number;
  message: string;
}

export interface LfsObjectWire {
  oid: string;
  size: number;
  authenticated?: boolean;
  actions?: Partial<Record<'download' | 'upload' | 'verify', LfsLinkWire>>;
  error?: LfsObjectErrorWire;
}

export interface LfsBatchResponseWire {
  transfer: 'basic';
  objects: LfsObjectWire[];
  hash_algo: 'sha256';
}

/** One object as a client names it: untrusted, checked by `isValidPointer`. */
export interface LfsPointer {
  oid: string;
  size: number;
}

export interface LfsLockWire {
  id: string;
  path: string;
  /** RFC 3339, to the second. */
  locked_at: string;
  owner: { name: string };
}

export interface LfsLockListWire {
  locks: LfsLockWire[];
  next_cursor?: string;
}

export interface LfsLockVerifyWire {
  ours: LfsLockWire[];
  theirs: LfsLockWire[];
  next_cursor?: string;
}
