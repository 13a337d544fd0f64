import * as fs from 'node:fs';
import * as path from 'node:path';

/** The version in package.json, found from here whether running from src/ (tests) or dist/src/ (built). */
function readPackageVersion(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'package.json');
    if (fs.existsSync(candidate)) {
      const pkg = JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'anvil' && pkg.version) return pkg.version;
    }
    if (path.dirname(dir) === dir) return '0.0.0';
  }
}

export const PACKAGE_VERSION = readPackageVersion();
