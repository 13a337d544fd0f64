import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { parseDatabaseUrl } from '../../src/config/config';

const ROOT = path.join(__dirname, '..', '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/**
 * The image itself is built by `docker build` (no Docker daemon in the test environment); these tests hold the
 * Dockerfile and compose.yaml to what the README promises, and run the native-build pruning for real.
 */
describe('Docker image and compose file', () => {
  it('pins the Node.js base image to a patch release, for both stages', () => {
    const dockerfile = read('Dockerfile');
    expect(/^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1]).toMatch(/^node:\d+\.\d+\.\d+-bookworm-slim(@sha256:[0-9a-f]{64})?$/);
    const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((match) => match[1]);
    expect(froms).toEqual(['${NODE_IMAGE}', '${NODE_IMAGE}']);
  });

  it('copies only the runtime into the final image, after pruning the native build tree', () => {
    const dockerfile = read('Dockerfile');
    const final = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    const copied = [...final.matchAll(/^COPY --from=build (\S+)/gm)].map((match) => match[1]);
    expect(copied).toEqual(['/app/package.json', '/app/node_modules', '/app/dist', '/app/assets']);
    expect(dockerfile).toContain('npm prune --omit=dev');
    expect(dockerfile).toContain('sh scripts/prune-native-builds.sh node_modules');
  });

  it('scripts/prune-native-builds.sh leaves only the compiled addon, and better-sqlite3 still works', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-prune-'));
    try {
      const modules = path.join(dir, 'node_modules');
      for (const name of ['better-sqlite3', 'bindings', 'file-uri-to-path']) {
        fs.cpSync(path.join(ROOT, 'node_modules', name), path.join(modules, name), { recursive: true });
      }
      execFileSync('sh', [path.join(ROOT, 'scripts', 'prune-native-builds.sh'), modules]);
      const module = path.join(modules, 'better-sqlite3');
      const left = fs.readdirSync(module);
      for (const gone of ['deps', 'src', 'binding.gyp']) expect(left).not.toContain(gone);
      expect(fs.readdirSync(path.join(module, 'build'))).toEqual(['Release']);
      expect(fs.readdirSync(path.join(module, 'build', 'Release'))).toEqual(['better_sqlite3.node']);
      const probe = `const D = require(${JSON.stringify(module)}); process.stdout.write(String(new D(':memory:').prepare('select 6 * 7 as x').get().x));`;
      expect(execFileSync(process.execPath, ['-e', probe], { encoding: 'utf8' })).toBe('42');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('compose.yaml runs Anvil on MariaDB, with healthchecks, volumes and the database up first', () => {
    const compose = parse(read('compose.yaml')) as {
      services: Record<
        string,
        {
          image?: string;
          build?: string;
          healthcheck?: { test: string[] };
          volumes?: string[];
          environment: Record<string, string>;
          depends_on?: Record<string, { condition: string }>;
          command?: string[];
        }
      >;
      volumes: Record<string, unknown>;
    };
    const { anvil, mariadb } = compose.services;
    expect(mariadb.image).toMatch(/^mariadb:\d+\.\d+/);
    expect(mariadb.command).toEqual(expect.arrayContaining(['--character-set-server=utf8mb4', '--collation-server=utf8mb4_bin']));
    expect(mariadb.healthcheck?.test).toContain('healthcheck.sh');
    expect(anvil.healthcheck?.test.join(' ')).toContain('/api/healthz');
    expect(anvil.depends_on).toEqual({ mariadb: { condition: 'service_healthy' } });
    expect(anvil.volumes).toEqual(['anvil-data:/data']);
    expect(mariadb.volumes).toEqual(['mariadb-data:/var/lib/mysql']);
    expect(Object.keys(compose.volumes).sort()).toEqual(['anvil-data', 'mariadb-data']);
    expect(anvil.environment.ROOT_URL).toBe('${ANVIL_ROOT_URL:-http://localhost:3000/}');
    // The URL Anvil gets, with a sample password substituted, is one its configuration accepts.
    const url = anvil.environment.DATABASE_URL.replace('${ANVIL_DB_PASSWORD:?set ANVIL_DB_PASSWORD}', 'sample-password');
    expect(parseDatabaseUrl(url, '/data')).toEqual({
      type: 'mysql',
      host: 'mariadb',
      port: 3306,
      username: 'anvil',
      password: 'sample-password',
      database: 'anvil',
      hosts: [{ host: 'mariadb', port: 3306 }],
    });
    expect(mariadb.environment.MARIADB_DATABASE).toBe('anvil');
  });
});
