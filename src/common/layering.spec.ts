import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

// The foundation's layering (docs/architecture.md, "Layers"): the folders every feature module builds on import
// only the folders below them, never a feature module and never each other in a loop. Only imports that exist when
// the code runs count: `import type` is erased by the compiler. Specs are left out: a test may assemble anything.

const SRC = path.resolve(__dirname, '..');

/** Bottom first: each foundation folder may import the folders listed before it, and nothing else under src/. */
const FOUNDATION = ['config', 'common', 'database', 'http', 'logging'] as const;

/**
 * The one file of the foundation that names feature modules: the list of every entity the data source maps. It
 * imports entity classes and nothing else (checked below).
 */
const ENTITY_LIST = path.join('database', 'entities.ts');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [full] : [];
  });
}

/** The folder directly under src/ that holds `file` ('' for src/ itself, undefined outside src/). */
function folderOf(file: string): string | undefined {
  const relative = path.relative(SRC, file);
  if (relative.startsWith('..')) return undefined;
  const parts = relative.split(path.sep);
  return parts.length > 1 ? parts[0] : '';
}

/** The relative paths a file imports or re-exports at run time (type-only imports left out). */
function runtimeImports(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly || (!clause.name && named !== undefined && named.length > 0 && named.every((element) => element.isTypeOnly)));
      if (!typeOnly) found.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      if (!node.isTypeOnly) found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.arguments.length === 1 && ts.isStringLiteral(node.arguments[0])) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require')) found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found.filter((specifier) => specifier.startsWith('.'));
}

/** Every import of a foundation file that goes sideways or up: "file -> target folder (specifier)". */
function offences(files: string[], read = (file: string) => fs.readFileSync(file, 'utf8')): string[] {
  const found: string[] = [];
  for (const file of files) {
    const folder = folderOf(file);
    const layer = FOUNDATION.indexOf(folder as (typeof FOUNDATION)[number]);
    if (layer < 0) continue;
    const allowed = new Set<string>(FOUNDATION.slice(0, layer + 1));
    const relative = path.relative(SRC, file);
    for (const specifier of runtimeImports(file, read(file))) {
      const target = path.resolve(path.dirname(file), specifier);
      const targetFolder = folderOf(target);
      if (targetFolder === undefined || allowed.has(targetFolder)) continue;
      if (relative === ENTITY_LIST && /\.entit(y|ies)$/.test(target)) continue;
      found.push(`${relative} -> ${targetFolder || 'src'} (${specifier})`);
    }
  }
  return found;
}

describe('Layering: the foundation imports only what lies below it', () => {
  const files = sourceFiles(SRC);

  it('finds the source tree and every foundation folder', () => {
    for (const folder of FOUNDATION) expect(files.some((file) => folderOf(file) === folder)).toBe(true);
  });

  it('no foundation file imports a feature module, a folder above its own, or src/ itself', () => {
    expect(offences(files)).toEqual([]);
  });

  it('the entity list imports entity classes only', () => {
    const list = path.join(SRC, ENTITY_LIST);
    const imports = runtimeImports(list, fs.readFileSync(list, 'utf8'));
    expect(imports.length).toBeGreaterThan(10);
    expect(imports.filter((specifier) => !/\.entit(y|ies)$/.test(specifier))).toEqual([]);
  });

  it('catches a value import that climbs, and lets a type-only one pass', () => {
    const file = path.join(SRC, 'common', 'example.ts');
    const climbing = "import { UserAccounts } from '../users/user-accounts';\nexport const a = () => require('../http/route-table');";
    expect(runtimeImports(file, climbing)).toEqual(['../users/user-accounts', '../http/route-table']);
    expect(offences([file], () => climbing)).toEqual([
      'common/example.ts -> users (../users/user-accounts)',
      'common/example.ts -> http (../http/route-table)',
    ]);
    expect(offences([path.join(SRC, 'http', 'example.ts')], () => "import { Clock } from '../common/time';")).toEqual([]);
    expect(runtimeImports(file, "import type { UserEntity } from '../users/user.entity';\nimport { type A, type B } from '../auth/a';")).toEqual([]);
    expect(runtimeImports(file, "import { type A, b } from '../auth/a';\nexport * from '../git/git';")).toEqual(['../auth/a', '../git/git']);
  });
});
