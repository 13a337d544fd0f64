import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GitOutcome } from './git-client';

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
    '-i',
    privateKey,
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'IdentityAgent=none',
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    'UserKnownHostsFile=/dev/null',
    '-o',
    'BatchMode=yes',
    '-o',
    'LogLevel=ERROR',
    ...extra,
  ].join(' ');
}

/**
 * The real `ssh` client with only this key against the test server's SSH port, with a raw command (or none), as
 * git would run it; `env` is the client's environment (GitClient.env()).
 */
export function runSsh(
  server: { port: number; env: NodeJS.ProcessEnv },
  key: SshKeyFiles,
  command?: string,
  login = 'git',
  options: string[] = ['-T'],
): Promise<GitOutcome> {
  const args = [...sshCommand(key.privateKey).split(' ').slice(1), ...options, '-p', String(server.port), `${login}@127.0.0.1`];
  if (command !== undefined) args.push(command);
  return new Promise((resolve, reject) => {
    const child = spawn('ssh', args, { env: server.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
  });
}
