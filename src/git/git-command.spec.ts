import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AppConfig } from '../config/config';
import type { GitConfig } from '../config/slices';
import { GitCommand } from './git-command';
import { GitLauncher } from './git-launcher';

describe('GitCommand.stream: output read as it comes', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-git-stream-'));
  const launcher = new GitLauncher();
  const git = new GitCommand({ dataDir } as AppConfig, { treeMaxEntries: 1000 } as GitConfig, launcher);
  afterAll(() => {
    launcher.onApplicationShutdown();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function read(stdout: AsyncIterable<Buffer>): Promise<string> {
    let text = '';
    for await (const chunk of stdout) text += chunk.toString('utf8');
    return text;
  }

  it('hands over the whole output of a git that ended before its reader began', async () => {
    // A walk whose caller first awaits other work: git has written, exited and been reaped by then.
    const stream = git.stream(['hash-object', '--stdin'], { input: 'hello\n' });
    await stream.exited;
    expect(await read(stream.stdout)).toBe('ce013625030ba8dba906f756967f9e9ca394464a\n');
  });

  it('ends a killed stream whose output nobody reads', async () => {
    // More than the pipes hold: git waits for a reader that never comes, until it is killed.
    const killed = git.stream(['-c', 'alias.big=!head -c 10000000 /dev/zero', 'big']);
    killed.kill();
    await expect(killed.exited).resolves.toBeUndefined();
  });
});
