import * as path from 'node:path';
import { Injectable } from '@nestjs/common';
import { StorageConfig } from '../config/slices';

/** The directory under DATA_DIR that holds every repository. */
export function repositoriesRoot(dataDir: string): string {
  return path.join(dataDir, 'repositories');
}

/** `DATA_DIR/repositories/<owner lowercased>/<name lowercased>.git`. */
export function repositoryPath(dataDir: string, ownerName: string, repoName: string): string {
  return path.join(repositoriesRoot(dataDir), safeSegment(ownerName), `${safeSegment(repoName)}.git`);
}

/**
 * Where directories of deleted repositories wait for removal. Owner names start with a letter or digit, so
 * `.trash` can never be an owner's directory.
 */
export function trashRoot(dataDir: string): string {
  return path.join(repositoriesRoot(dataDir), '.trash');
}

/**
 * Where migrations clone before their repository exists: under the repositories root, so that moving a clone
 * into place is one rename on the same file system. Like `.trash`, never an owner's directory.
 */
export function incomingRoot(dataDir: string): string {
  return path.join(repositoriesRoot(dataDir), '.incoming');
}

/**
 * Object pools of fork networks (docs/forks.md). Like `.trash`, never an owner's directory; at the depth of
 * `<owner>/<name>.git`, so that a member's relative alternates line reaches its pool from wherever it sits.
 */
export function poolsRoot(dataDir: string): string {
  return path.join(repositoriesRoot(dataDir), '.pools');
}

/** The journal of repository directory moves in flight (repository-journal.ts). Like `.trash`, never an owner's. */
export function journalRoot(dataDir: string): string {
  return path.join(repositoriesRoot(dataDir), '.journal');
}

/** Temporary index files of commits made by the API: outside every repository. */
export function gitIndexesRoot(dataDir: string): string {
  return path.join(dataDir, 'tmp', 'git-index');
}

/**
 * The name under which a repository directory is leased while its row and directory change together (creation,
 * rename, deletion, and the reconciliation of an interrupted rename): `owner/name.git`, lowercased.
 */
export function repositoryLeaseKey(dir: string): string {
  return `${path.basename(path.dirname(dir))}/${path.basename(dir)}`.toLowerCase();
}

/**
 * Names reach here validated (AlphaDashDot, reserved names refused); this is the last guard against a name
 * that would leave its directory.
 */
function safeSegment(name: string): string {
  const lower = name.toLowerCase();
  if (lower === '' || lower === '.' || lower === '..' || /[/\\\0]/.test(lower)) {
    throw new Error(`unsafe name for a path segment: ${JSON.stringify(name)}`);
  }
  return lower;
}

/** The one place that builds repository paths on disk. */
@Injectable()
export class RepositoryPaths {
  constructor(private readonly storageConfig: StorageConfig) {}

  repository(ownerName: string, repoName: string): string {
    return repositoryPath(this.storageConfig.dataDir, ownerName, repoName);
  }

  trash(): string {
    return trashRoot(this.storageConfig.dataDir);
  }

  incoming(): string {
    return incomingRoot(this.storageConfig.dataDir);
  }

  pools(): string {
    return poolsRoot(this.storageConfig.dataDir);
  }

  /** A pool's bare repository: `.pools/<name>.git`; names are Anvil's own (`GitPools.newName`). */
  pool(name: string): string {
    if (!/^[a-z0-9-]{1,64}$/.test(name)) throw new Error(`unsafe pool name: ${JSON.stringify(name)}`);
    return path.join(this.pools(), `${name}.git`);
  }

  journal(): string {
    return journalRoot(this.storageConfig.dataDir);
  }

  gitIndexes(): string {
    return gitIndexesRoot(this.storageConfig.dataDir);
  }
}
