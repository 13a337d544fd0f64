import * as path from 'node:path';

/**
 * A fixed search path: git is found the same way whatever the server's environment holds, and nothing of that
 * environment (GIT_DIR, GIT_WORK_TREE, a user's ~/.gitconfig, …) leaks into the commands.
 */
const SEARCH_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** HOME of every git process Anvil runs: a directory under DATA_DIR, never the server user's home. */
export function gitHome(dataDir: string): string {
  return path.join(dataDir, 'git-home');
}

/**
 * What git syncs to disk before it reports success. Its default leaves out loose objects and refs, and a small
 * push is unpacked into loose objects: after a power cut or a kernel crash the database could record a push whose
 * objects or branch were lost. With these, a ref is synced once its objects are, before the push is answered.
 */
export const GIT_FSYNC = 'objects,derived-metadata,reference';

/**
 * The isolated environment of every git process (docs/git-transports.md): no system or global configuration,
 * and what is written is synced (GIT_FSYNC; GIT_CONFIG_PARAMETERS is how git passes `-c` on to the commands it
 * runs, so it holds for receive-pack's children and hooks too).
 */
export function gitEnvironment(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: SEARCH_PATH,
    HOME: gitHome(dataDir),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_PARAMETERS: `'core.fsync'='${GIT_FSYNC}'`,
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
    ...extra,
  };
}
