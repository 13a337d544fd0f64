import * as fs from 'node:fs';
import * as path from 'node:path';

// A source file longer than LONG_FILE_LINES says in its first comment why it is one piece, in the words
// "One cohesive thing, kept whole though long: <why>", so that a reader knows the length is chosen, not grown.

const SRC = path.resolve(__dirname, '..');
const LONG_FILE_LINES = 350;
const WHY = /^\s*\/\/ One cohesive thing, kept whole though long: \S/;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [full] : [];
  });
}

/** The first comment line of a source file (after its imports), or undefined. */
function firstComment(source: string): string | undefined {
  return source.split('\n').find((line) => /^\s*(\/\/|\/\*)/.test(line));
}

function unexplained(files: string[], read = (file: string) => fs.readFileSync(file, 'utf8')): string[] {
  return files
    .filter((file) => {
      const source = read(file);
      return source.split('\n').length > LONG_FILE_LINES && !WHY.test(firstComment(source) ?? '');
    })
    .map((file) => path.relative(SRC, file));
}

describe('Long source files say why they are one piece', () => {
  it(`every src/ file over ${LONG_FILE_LINES} lines opens its comments with the reason`, () => {
    expect(unexplained(sourceFiles(SRC))).toEqual([]);
  });

  it('tells a long file with the reason from one without', () => {
    const long = (comment: string) => `import { a } from './a';\n${comment}\n${'const x = 1;\n'.repeat(LONG_FILE_LINES)}`;
    const file = path.join(SRC, 'example.ts');
    expect(unexplained([file], () => long('// One cohesive thing, kept whole though long: the parser and its policy.'))).toEqual([]);
    expect(unexplained([file], () => long('/** Something else first. */'))).toEqual(['example.ts']);
    expect(unexplained([file], () => 'const short = 1;\n')).toEqual([]);
  });
});
