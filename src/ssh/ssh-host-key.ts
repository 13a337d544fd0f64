import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as Ssh2 from 'ssh2';

/**
 * The server's host key (docs/git-transports.md): read from SSH_HOST_KEY, or, when the file is missing, an
 * ed25519 key generated there (private part mode 0600, `.pub` beside it), so that the key stays the same across
 * restarts and clients' known_hosts entries keep matching.
 */
export function loadOrCreateHostKey(file: string): { key: Buffer; generated: boolean } {
  if (fs.existsSync(file)) return { key: fs.readFileSync(file), generated: false };
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const pair = generateEd25519();
  // `wx`: if another process created the file meanwhile, its key wins and is read instead.
  try {
    fs.writeFileSync(file, pair.private, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return { key: fs.readFileSync(file), generated: false };
    throw error;
  }
  fs.writeFileSync(`${file}.pub`, `${pair.public}\n`, { mode: 0o644 });
  return { key: Buffer.from(pair.private), generated: true };
}

/**
 * ssh2's generator drops a leading zero byte of the public key when it writes the OpenSSH format (about one key
 * in 250 comes out malformed and unreadable by ssh2 itself), so a pair is kept only once it parses back.
 */
function generateEd25519(): { private: string; public: string } {
  // Loaded here only, on the start that makes the key: the SSH protocol runs on its own thread (ssh-transport.ts).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { utils } = require('ssh2') as typeof Ssh2;
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const pair = utils.generateKeyPairSync('ed25519', { comment: 'anvil host key' });
    if (!(utils.parseKey(pair.private) instanceof Error) && !(utils.parseKey(pair.public) instanceof Error)) return pair;
  }
  throw new Error('could not generate a well-formed ed25519 host key');
}
