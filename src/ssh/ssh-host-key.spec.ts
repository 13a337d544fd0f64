import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { utils } from 'ssh2';
import { loadOrCreateHostKey } from './ssh-host-key';

describe('loadOrCreateHostKey', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-host-key-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('generates a well-formed ed25519 key once, then keeps it', () => {
    // Enough generations that ssh2's occasional malformed key (about 1 in 250) would show without the check.
    for (let index = 0; index < 600; index += 1) {
      const file = path.join(dir, `key-${index}`, 'ssh_host_ed25519_key');
      const { key, generated } = loadOrCreateHostKey(file);
      expect(generated).toBe(true);
      const parsed = utils.parseKey(key);
      if (parsed instanceof Error) throw parsed;
      expect(parsed.type).toBe('ssh-ed25519');
    }
    const file = path.join(dir, 'key-0', 'ssh_host_ed25519_key');
    const again = loadOrCreateHostKey(file);
    expect(again.generated).toBe(false);
    expect(again.key.equals(fs.readFileSync(file))).toBe(true);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });
});
