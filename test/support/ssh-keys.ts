import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface SshKeyFiles {
  privateKey: string;
  publicLine: string;
}

/** A fresh key pair from the real `ssh-keygen` (no passphrase) in `dir`. */
export function generateSshKey(dir: string, name: string, type: 'ed25519' | 'ecdsa' | 'rsa' = 'ed25519'): SshKeyFiles {
  const privateKey = path.join(dir, name);
  const extra = type === 'rsa' ? ['-b', '3072'] : [];
  execFileSync('ssh-keygen', ['-q', '-t', type, ...extra, '-N', '', '-C', name, '-f', privateKey]);
  return { privateKey, publicLine: fs.readFileSync(`${privateKey}.pub`, 'utf8').trim() };
}

/** GIT_SSH_COMMAND for the real `ssh` client with only this key, no host key checks and no prompts. */
export function sshCommand(privateKey: string, extra: string[] = []): string {
  return [
    'ssh',
    '-i', privateKey,
    '-o', 'IdentitiesOnly=yes',
    '-o', 'IdentityAgent=none',
    '-o', 'StrictHostKeyChecking=no',
    '-o', 'UserKnownHostsFile=/dev/null',
    '-o', 'BatchMode=yes',
    '-o', 'LogLevel=ERROR',
    ...extra,
  ].join(' ');
}
