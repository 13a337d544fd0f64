import { languageBytes, languageOf } from './language-detection';

describe('language detection', () => {
  it("names a file's language by its extension or file name", () => {
    expect(languageOf('src/main.ts')).toBe('TypeScript');
    expect(languageOf('cmd/server/main.go')).toBe('Go');
    expect(languageOf('lib/x.h')).toBe('C');
    expect(languageOf('index.HTML')).toBe('HTML');
    expect(languageOf('Makefile')).toBe('Makefile');
    expect(languageOf('Dockerfile')).toBe('Dockerfile');
  });

  it('leaves out data, prose, unknown files and vendored directories', () => {
    expect(languageOf('README.md')).toBeUndefined();
    expect(languageOf('package.json')).toBeUndefined();
    expect(languageOf('notes.txt')).toBeUndefined();
    expect(languageOf('LICENSE')).toBeUndefined();
    expect(languageOf('node_modules/left-pad/index.js')).toBeUndefined();
    expect(languageOf('vendor/lib.go')).toBeUndefined();
  });

  it('sums bytes per language', () => {
    expect(
      Object.fromEntries(
        languageBytes([
          { path: 'a.go', size: 10 },
          { path: 'b/c.go', size: 5 },
          { path: 'd.py', size: 7 },
          { path: 'README.md', size: 100 },
        ]),
      ),
    ).toEqual({ Go: 15, Python: 7 });
  });
});
