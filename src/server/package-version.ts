import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The directory of Anvil's package.json, found from here whether running from src/ (tests) or dist/src/ (built),
 * with its version.
 */
function findPackage(): { root: string; version: string } {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'package.json');
    if (fs.existsSync(candidate)) {
      const pkg = JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'anvil' && pkg.version) return { root: dir, version: pkg.version };
    }
    if (path.dirname(dir) === dir) return { root: process.cwd(), version: '0.0.0' };
  }
}

const found = findPackage();

export const PACKAGE_VERSION = found.version;

/** The Forgejo release whose API Anvil answers as: clients turn features on by it (reviews, automerge). */
export const FORGEJO_API_VERSION = '10.0.0';

/**
 * What GET /version answers, in Forgejo's form `<forgejo>+gitea-<gitea>`, with Anvil's own version after it:
 * clients read the part before `+gitea-` as Forgejo's release, and the whole stays valid semver.
 */
export function serverVersion(packageVersion: string): string {
  const [anvil, build = ''] = packageVersion.split('+');
  const gitea = /^gitea-(\d+\.\d+\.\d+)$/.exec(build)?.[1] ?? '1.22.0';
  return `${FORGEJO_API_VERSION}+gitea-${gitea}.anvil-${anvil}`;
}

export const SERVER_VERSION = serverVersion(PACKAGE_VERSION);

/** Where package.json, assets/ and dist/ live. */
export const PACKAGE_ROOT = found.root;
