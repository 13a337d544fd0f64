import { Injectable } from '@nestjs/common';
import { LfsConfig, SiteConfig } from '../config/slices';
import type { RepositoryEntity } from '../repos/repository.entity';
import type { UserEntity } from '../users/user.entity';
import type { LfsOperation } from './lfs.service';
import { LfsTokens } from './lfs-tokens';

/**
 * The answer of `git-lfs-authenticate <repo> upload|download` over SSH, once the SSH server has decided, as for
 * git, that the user may read (download) or push to (upload) the repository: the LFS API's address and a
 * bearer token bound to that repository and operation.
 */
@Injectable()
export class LfsSshAuthentication {
  constructor(
    private readonly lfsConfig: LfsConfig,
    private readonly siteConfig: SiteConfig,
    private readonly tokens: LfsTokens,
  ) {}

  get enabled(): boolean {
    return this.lfsConfig.startServer;
  }

  answer(user: UserEntity, owner: UserEntity, repo: RepositoryEntity, operation: LfsOperation): string {
    const { token, expiresIn } = this.tokens.issue({ userId: user.id, repositoryId: repo.id, operation });
    const href = `${this.siteConfig.rootUrl}${encodeURIComponent(owner.name)}/${encodeURIComponent(repo.name)}.git/info/lfs`;
    return JSON.stringify({ header: { Authorization: `Bearer ${token}` }, href, expires_in: expiresIn });
  }
}
