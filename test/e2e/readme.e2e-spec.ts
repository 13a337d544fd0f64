import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

function section(title: string): string {
  const start = README.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README has no section "${title}"`);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end < 0 ? undefined : end);
}

/** The README claims nothing the code and the tests do not back. */
describe('README', () => {
  it('lists only clients whose test exists, and each test file names the client', () => {
    const rows = section('Client compatibility')
      .split('\n')
      .filter((line) => line.startsWith('| ') && !line.startsWith('| Client') && !line.startsWith('|---'));
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const row of rows) {
      const file = /`(test\/[^`]+\.ts)`/.exec(row)?.[1];
      expect(file).toBeDefined();
      expect(fs.existsSync(path.join(ROOT, file!))).toBe(true);
    }
    expect(fs.readFileSync(path.join(ROOT, 'test/e2e/clients.e2e-spec.ts'), 'utf8')).toContain("from 'gitea-js'");
  });

  it('documents exactly the settings the configuration reads', () => {
    const documented = [...section('Configuration').matchAll(/^\| `([A-Z_]+)` \|/gm)].map((match) => match[1]).sort();
    const config = fs.readFileSync(path.join(ROOT, 'src/config/config.ts'), 'utf8');
    const read = [...new Set([...config.matchAll(/\(env, '([A-Z_]+)'|\benv\.([A-Z_]+)\b/g)].map((match) => match[1] ?? match[2]))];
    expect(documented).toEqual(read.sort());
  });

  it('runs the CLI with npm run --silent everywhere, so npm never echoes a password', () => {
    const commands = README.split('\n').filter((line) => /npm run (--silent )?cli -- /.test(line));
    expect(commands.length).toBeGreaterThan(3);
    expect(commands.filter((line) => !line.includes('npm run --silent cli -- '))).toEqual([]);
  });

  it('sets ROOT_URL in the Docker example and explains compose.yaml', () => {
    const docker = section('Docker');
    expect(docker).toMatch(/docker run .*-e ROOT_URL=/);
    expect(docker).toContain('compose.yaml');
    expect(docker).toContain('docker compose up');
  });
});
