import * as fs from 'node:fs';
import * as path from 'node:path';

// The layering rule (CONTRIBUTING.md): a store (a class named *Store) is the door of its module to the
// database and never leaves that module. Other modules call the owning module's services or lookups, which
// the module exports instead. This test reads every source file under src/ and fails on a store imported
// from another module folder, or a store listed in a module's `exports`.

const SRC = path.resolve(__dirname, '..');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The module folder of a file: the first folder under src/ ('' for files directly in src/). */
function moduleOf(file: string): string {
  const parts = path.relative(SRC, file).split(path.sep);
  return parts.length > 1 ? parts[0] : '';
}

/** The names a file imports (or re-exports) from relative paths, as `{ name, from }`, comments ignored. */
function relativeImports(source: string): { name: string; from: string }[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const found: { name: string; from: string }[] = [];
  const statement = /\b(?:import|export)\s+(?:type\s+)?([\w$]+\s*,\s*)?(?:\{([^}]*)\}|([\w$]+)|\*\s+as\s+([\w$]+))\s+from\s+['"](\.[^'"]*)['"]/g;
  for (const match of code.matchAll(statement)) {
    const from = match[5];
    const names = [match[1]?.replace(',', ''), match[3], match[4], ...(match[2] ?? '').split(',')]
      .map((name) =>
        (name ?? '')
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)[0]
          .trim(),
      )
      .filter((name) => name !== '');
    for (const name of names) found.push({ name, from });
  }
  return found;
}

/** The identifiers listed in the `exports: [...]` of a module file's @Module decorator. */
function moduleExports(source: string): string[] {
  const start = source.search(/\bexports\s*:\s*\[/);
  if (start < 0) return [];
  let depth = 0;
  let end = source.indexOf('[', start);
  const open = end;
  for (; end < source.length; end++) {
    if (source[end] === '[') depth++;
    if (source[end] === ']' && --depth === 0) break;
  }
  return source.slice(open + 1, end).match(/[A-Za-z_$][\w$]*/g) ?? [];
}

const isStore = (name: string) => /Store$/.test(name);

/** `file` imports a store from another module folder: each as "file: Name from path". */
function crossModuleStoreImports(file: string, source: string): string[] {
  return relativeImports(source)
    .filter(({ name, from }) => isStore(name) && moduleOf(path.resolve(path.dirname(file), from)) !== moduleOf(file))
    .map(({ name, from }) => `${path.relative(SRC, file)}: ${name} from ${from}`);
}

describe('Module boundaries: stores stay inside their module', () => {
  // This file itself is left out: its examples below are offences on purpose.
  const files = sourceFiles(SRC).filter((file) => file !== __filename);

  it('finds the source tree', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.some((file) => file.endsWith(path.join('users', 'user.store.ts')))).toBe(true);
  });

  it('no file imports a *Store from another module folder', () => {
    const offences = files.flatMap((file) => crossModuleStoreImports(file, fs.readFileSync(file, 'utf8')));
    expect(offences).toEqual([]);
  });

  it('no module exports a *Store', () => {
    const offences = files
      .filter((file) => file.endsWith('.module.ts'))
      .flatMap((file) =>
        moduleExports(fs.readFileSync(file, 'utf8'))
          .filter(isStore)
          .map((name) => `${path.relative(SRC, file)}: ${name}`),
      );
    expect(offences).toEqual([]);
  });

  it('recognises the offences it looks for', () => {
    const teams = path.join(SRC, 'teams', 'teams.service.ts');
    const source = [
      "import { UserStore } from '../users/user.store';",
      "import {\n  TeamStore,\n  type TeamRow,\n} from './team.store';",
      "import type { RepositoryStore as Repos } from '../repos/repository.store';",
      "// import { QuotaStore } from '../quota/quota.store';",
      "import { UserAccounts } from '../users/user-accounts';",
    ].join('\n');
    expect(crossModuleStoreImports(teams, source)).toEqual([
      'teams/teams.service.ts: UserStore from ../users/user.store',
      'teams/teams.service.ts: RepositoryStore from ../repos/repository.store',
    ]);
    expect(moduleExports('@Module({ providers: [A], exports: [UsersService, UserStore, { provide: X, useExisting: Y }] })').filter(isStore)).toEqual([
      'UserStore',
    ]);
  });
});
