import * as fs from 'node:fs';
import * as path from 'node:path';

// Branch protection is decided in one place (docs/branch-protection.md): the access policy's BranchProtections
// for every door of a ref change, canMerge for merges. This test reads every source file outside src/access/
// and fails on one that could decide for itself: an import of the judgments (branch-protection.ts), of the
// rules' store, or of the glob matcher beyond the syntax checks the rules' routes make; SQL on the rules'
// table; or a read of a rule's push or file fields outside the module that edits rules.

const SRC = path.resolve(__dirname, '..');
const ACCESS = __dirname;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [full] : [];
  });
}

interface Imported {
  names: string[];
  typeOnly: boolean;
  from: string;
}

function importsOf(source: string): Imported[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const statement = /\bimport\s+(type\s+)?(?:\{([^}]*)\}|([\w$]+)|\*\s+as\s+([\w$]+))\s+from\s+['"](\.[^'"]*)['"]/g;
  return [...code.matchAll(statement)].map((match) => {
    const names = [match[3], match[4], ...(match[2] ?? '').split(',')].map((name) => (name ?? '').trim()).filter((name) => name !== '');
    const typeOnly = match[1] !== undefined || (names.length > 0 && names.every((name) => name.startsWith('type ')));
    return { names: names.map((name) => name.replace(/^type\s+/, '').split(/\s+as\s+/)[0]), typeOnly, from: match[5] };
  });
}

/** The glob helpers the rules' routes may use to check what they store. */
const SYNTAX_CHECKS = new Set(['isGlob', 'globError', 'filePatternsError']);
/** Fields that decide a push; only the module that edits rules (and the access policy) touches them. */
const DECIDING_FIELDS = /\.(canPush|enableWhitelist|whitelistUserIds|whitelistTeamIds|whitelistDeployKeys|protectedFilePatterns|unprotectedFilePatterns)\b/;

export function offences(file: string, source: string): string[] {
  const found: string[] = [];
  const where = path.relative(SRC, file);
  for (const imported of importsOf(source)) {
    const target = path.resolve(path.dirname(file), imported.from);
    if (path.dirname(target) !== ACCESS) continue;
    const base = path.basename(target);
    if (base === 'branch-protection' && !imported.typeOnly) found.push(`${where}: imports the judgments (${imported.names.join(', ')})`);
    if (base === 'branch-protection.store') found.push(`${where}: imports the rules' store`);
    if (base === 'branch-globs') {
      const extra = imported.names.filter((name) => !SYNTAX_CHECKS.has(name));
      if (extra.length > 0) found.push(`${where}: matches globs itself (${extra.join(', ')})`);
    }
    if (base === 'branch-protection.entity' && !imported.typeOnly && where !== path.join('database', 'entities.ts'))
      found.push(`${where}: reads the rules' entity`);
  }
  if (/\bprotected_branch\b/.test(source) && !where.startsWith(`database${path.sep}migrations`)) found.push(`${where}: names the rules' table`);
  if (DECIDING_FIELDS.test(source) && !where.startsWith(`branch-protections${path.sep}`)) found.push(`${where}: reads a rule's push or file fields`);
  return found;
}

describe('Branch protection is decided only by the access policy', () => {
  const files = sourceFiles(SRC).filter((file) => path.dirname(file) !== ACCESS);

  it('finds the doors', () => {
    for (const door of ['repos/repository-pushes.service.ts', 'content/file-writes.service.ts', 'content/branches.service.ts']) {
      expect(fs.readFileSync(path.join(SRC, door), 'utf8')).toContain('this.protections.');
    }
  });

  it('no module outside src/access/ checks protection itself', () => {
    expect(files.flatMap((file) => offences(file, fs.readFileSync(file, 'utf8')))).toEqual([]);
  });

  it('catches the offences it looks for', () => {
    const file = path.join(SRC, 'pulls', 'pulls.service.ts');
    expect(offences(file, "import { governingRule } from '../access/branch-protection';")).toHaveLength(1);
    expect(offences(file, "import type { ProtectionRule } from '../access/branch-protection';")).toHaveLength(0);
    expect(offences(file, "import { compileGlob } from '../access/branch-globs';")).toHaveLength(1);
    expect(offences(file, "import { BranchProtectionStore } from '../access/branch-protection.store';")).toHaveLength(1);
    expect(offences(file, "const rows = await q('SELECT * FROM protected_branch');")).toHaveLength(1);
    expect(offences(file, 'if (!rule.canPush) refuse();')).toHaveLength(1);
    expect(offences(file, "import { canMerge } from '../access/branch-merge';")).toHaveLength(0);
  });
});
