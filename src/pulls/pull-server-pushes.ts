import { Injectable } from '@nestjs/common';
import type { RepositoryTarget } from '../access/repository-policy';
import { ConflictError } from '../common/errors';
import { ContentRepositories, ContentRepository } from '../content/content-repository';
import { GitWrites, RefChangedError } from '../git/git-writes';
import { PushRefused, RefUpdate } from '../git/push-hooks';
import { RepositoryPushes } from '../repos/repository-pushes.service';

/**
 * A branch moved by the server for a pull request (a merge into its base, an update of its head) as a push of
 * the caller would move it: the push's rules first, then one compare-and-swap of the ref.
 */
@Injectable()
export class PullServerPushes {
  constructor(
    private readonly pushes: RepositoryPushes,
    private readonly content: ContentRepositories,
    private readonly writes: GitWrites,
  ) {}

  /** Pre-receive's rules, then one compare-and-swap: a refusal or a lost race is a 409 in Forgejo's words. */
  async move(target: RepositoryTarget, content: ContentRepository, pullId: number, update: RefUpdate, beforeUpdate?: () => Promise<void>): Promise<void> {
    try {
      await this.pushes.preReceive({ repositoryId: target.repo.id, pusherId: target.viewer.user!.id, pullRequestId: pullId }, [update], {});
    } catch (error) {
      if (error instanceof PushRefused)
        throw new ConflictError(error.message ? `PushRejected with remote message: ${error.message}` : 'PushRejected without remote error message');
      throw error;
    }
    await beforeUpdate?.();
    try {
      await this.content.withGit(() => this.writes.updateRef(content.dir, update.ref, update.newId, update.oldId));
    } catch (error) {
      if (error instanceof RefChangedError) throw new ConflictError('merge push out of date');
      throw error;
    }
  }
}
