import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';

/**
 * Where clients reach the SSH server: user, host and port of `ssh_url` (docs/git-transports.md). The port is
 * SSH_PORT when set, else the port the server actually bound (SSH_LISTEN_PORT=0 takes a free one, known
 * only once it listens).
 */
@Injectable()
export class SshEndpoint {
  private boundPort: number | null = null;

  constructor(@Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'rootHost' | 'ssh'>) {}

  get user(): string {
    return this.config.ssh.user;
  }

  get host(): string {
    return this.config.rootHost;
  }

  get port(): number {
    return this.config.ssh.advertisedPort ?? this.boundPort ?? this.config.ssh.listenPort;
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
