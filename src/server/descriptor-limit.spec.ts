import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../config/config';
import { fitToDescriptorLimit, openFilesLimit } from './descriptor-limit';

describe('fitting the process limits to RLIMIT_NOFILE', () => {
  it('reads the soft limit of open files from the limits file, and nothing from an unlimited or missing one', () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-limits-'));
    try {
      const file = path.join(directory, 'limits');
      fs.writeFileSync(
        file,
        'Limit                     Soft Limit           Hard Limit           Units\nMax open files            64                   4096                 files\n',
      );
      expect(openFilesLimit(file)).toBe(64);
      fs.writeFileSync(file, 'Max open files            unlimited            unlimited            files\n');
      expect(openFilesLimit(file)).toBeUndefined();
      expect(openFilesLimit(path.join(directory, 'missing'))).toBeUndefined();
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
    expect(openFilesLimit()).toBeGreaterThan(0);
  });

  it('lowers GIT_MAX_PROCESSES and HTTP_MAX_CONNECTIONS to fit 64 descriptors, and says so', () => {
    const config = loadConfig({ GIT_MAX_PROCESSES: '8', LOG_LEVEL: 'silent' });
    const warnings = fitToDescriptorLimit(config, 64);
    expect(config.git.maxProcesses).toBe(2);
    expect(config.http.maxConnections).toBe(13);
    expect(warnings).toEqual([
      'the process may open only 64 files (ulimit -n); raise it for more concurrent clients',
      'GIT_MAX_PROCESSES lowered from 8 to 2 to fit',
      'HTTP_MAX_CONNECTIONS lowered from 4096 to 13 to fit',
    ]);
  });

  it('changes nothing when the settings fit', () => {
    const config = loadConfig({ GIT_MAX_PROCESSES: '8', HTTP_MAX_CONNECTIONS: '100', LOG_LEVEL: 'silent' });
    expect(fitToDescriptorLimit(config, 1_000_000)).toEqual([]);
    expect(config.git.maxProcesses).toBe(8);
    expect(config.http.maxConnections).toBe(100);
  });
});
