import { Injectable } from '@nestjs/common';
import { SiteConfig, SshConfig } from '../config/slices';

/**
 * Where clients reach the SSH server: user, host and port of `ssh_url` (docs/git-transports.md). The port is
 * SSH_PORT when set, else the port the server actually bound (SSH_LISTEN_PORT=0 takes a free one, known
 * only once it listens).
 */
@Injectable()
export class SshEndpoint {
  private boundPort: number | null = null;

  constructor(
    private readonly siteConfig: SiteConfig,
    private readonly sshConfig: SshConfig,
  ) {}

  get user(): string {
    return this.sshConfig.user;
  }

  get host(): string {
    return this.siteConfig.rootHost;
  }

  get port(): number {
    return this.sshConfig.advertisedPort ?? this.boundPort ?? this.sshConfig.listenPort;
  }

  /** Called by the SSH server once it listens. */
  bound(port: number): void {
    this.boundPort = port;
  }
}

/**
 * `user@host:owner/name.git` on port 22, else `ssh://user@host:port/owner/name.git` (Forgejo's
 * ComposeSSHCloneURL). URL host names of IPv6 literals already carry their brackets.
 */
export function sshCloneUrl(ssh: { user: string; host: string; port: number }, repositoryPath: string): string {
  if (ssh.port === 22) return `${ssh.user}@${ssh.host}:${repositoryPath}.git`;
  return `ssh://${ssh.user}@${ssh.host}:${ssh.port}/${repositoryPath}.git`;
}
