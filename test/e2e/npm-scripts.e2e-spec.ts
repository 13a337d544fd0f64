import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { stale } = require('../../scripts/build-if-changed.js') as { stale(root: string): boolean };
const ROOT = path.join(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };

describe('npm scripts', () => {
  it('npm start and npm run cli build only when a source changed; npm run dev watches', () => {
    expect(pkg.scripts.prestart).toBe('node scripts/build-if-changed.js');
    expect(pkg.scripts.precli).toBe('node scripts/build-if-changed.js');
    expect(pkg.scripts.dev).toBe('node scripts/dev.js');
    expect(fs.readFileSync(path.join(ROOT, 'scripts', 'dev.js'), 'utf8')).toMatch(/'--watch'/);
  });

  it('npm start, the Docker image and npm run bench run the server with the same Node.js flags', () => {
    // Semi-spaces of 24 MiB: with 64 requests in flight the default 16 MiB promoted each request's objects to the old
    // generation (bench/RESULTS.md, "Side by side with the floor").
    expect(pkg.scripts.start).toBe('node --max-semi-space-size=24 dist/src/main.js');
    expect(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')).toContain('CMD ["node", "--max-semi-space-size=24", "dist/src/main.js"]');
    expect(fs.readFileSync(path.join(ROOT, 'bench', 'run.js'), 'utf8')).toMatch(/require\('\.\.\/package\.json'\)\s*\.scripts\.start/);
  });

  it('the build writes the module map last, and the Docker image writes it again once its packages are pruned', () => {
    // src/server/module-map.ts: the map is written for one installation; the image's prune makes another.
    expect(pkg.scripts.build).toMatch(/ && node scripts\/write-module-map\.js$/);
    const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const prune = dockerfile.indexOf('npm prune --omit=dev');
    expect(prune).toBeGreaterThan(0);
    expect(dockerfile.indexOf('node scripts/write-module-map.js', prune)).toBeGreaterThan(prune);
    // The entry points install it before anything else is required.
    for (const entry of ['src/main.ts', 'src/cli/main.ts']) {
      const firstImport = fs
        .readFileSync(path.join(ROOT, entry), 'utf8')
        .split('\n')
        .find((line) => line.startsWith('import '));
      expect(firstImport).toMatch(/^import '(\.\/|\.\.\/)server\/module-map-install';$/);
    }
  });

  describe('build-if-changed', () => {
    let root: string;
    const at = (file: string, seconds: number) => {
      fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      if (!fs.existsSync(path.join(root, file))) fs.writeFileSync(path.join(root, file), '');
      fs.utimesSync(path.join(root, file), seconds, seconds);
    };
    beforeEach(() => {
      root = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-build-'));
    });
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

    it('builds a checkout that was never built', () => {
      at('src/main.ts', 1000);
      expect(stale(root)).toBe(true);
    });

    it('skips the build when nothing is newer than the last one, and builds again after a change', () => {
      at('src/main.ts', 1000);
      at('src/deep/er/file.ts', 1000);
      at('package.json', 1000);
      at('dist/src/main.js', 2000);
      at('dist/.build-stamp', 2000);
      fs.utimesSync(path.join(root, 'src', 'deep', 'er'), 1000, 1000);
      fs.utimesSync(path.join(root, 'src', 'deep'), 1000, 1000);
      fs.utimesSync(path.join(root, 'src'), 1000, 1000);
      expect(stale(root)).toBe(false);
      at('src/deep/er/file.ts', 3000);
      expect(stale(root)).toBe(true);
    });

    it('builds again when the build output is gone', () => {
      at('src/main.ts', 1000);
      at('dist/.build-stamp', 2000);
      expect(stale(root)).toBe(true);
    });
  });
});
