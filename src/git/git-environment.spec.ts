import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GIT_FSYNC, gitEnvironment } from './git-environment';

describe('the environment of every git process', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-git-env-'));
  });
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('has git sync objects, commit graphs and refs, with every component known to this git', () => {
    const repo = path.join(dataDir, 'repo.git');
    const env = gitEnvironment(dataDir);
    execFileSync('git', ['init', '--quiet', '--bare', repo], { env });
    expect(execFileSync('git', ['config', '--get', 'core.fsync'], { cwd: repo, env, encoding: 'utf8' }).trim()).toBe(GIT_FSYNC);
    for (const component of ['objects', 'reference']) expect(GIT_FSYNC.split(',')).toContain(component);
    // An unknown component is only warned about, and then not synced: this git knows them all.
    const write = spawnSync('git', ['hash-object', '-w', '--stdin'], { cwd: repo, env, input: 'probe\n', encoding: 'utf8' });
    expect(write.status).toBe(0);
    expect(write.stderr).toBe('');
  });

  it('keeps that setting beside the configuration a caller passes (GIT_CONFIG_COUNT)', () => {
    const env = gitEnvironment(dataDir, { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.followRedirects', GIT_CONFIG_VALUE_0: 'false' });
    const listed = execFileSync('git', ['config', '--list'], { cwd: dataDir, env, encoding: 'utf8' });
    expect(listed).toContain(`core.fsync=${GIT_FSYNC}`);
    expect(listed).toContain('http.followredirects=false');
  });
});
