import * as fs from 'node:fs';

/**
 * Everything Anvil writes (the database, repositories, git's home) is its own: files are created without
 * group or other permissions (umask 077), and the data directory is made 0700 even when it already existed
 * with looser modes, so that other users of the machine cannot read private repositories or the database.
 */
export const PRIVATE_UMASK = 0o077;

export function secureDataDirectory(dataDir: string): void {
  process.umask(PRIVATE_UMASK);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dataDir, 0o700);
}
