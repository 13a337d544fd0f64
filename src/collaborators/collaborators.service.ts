import { AuditService } from '../audit/audit.service';
import { Transactions } from '../database/transactions';
import { Injectable } from '@nestjs/common';
import { AccessMode, parseAccessMode } from '../access/access-mode';
import { RepositoryPolicy, RepositoryTarget } from '../access/repository-policy';
import { assertMayQueryPermissionOf } from '../access/repository-viewer-rules';
import { AuthContext } from '../auth/auth-context';
import { InvalidInputError, NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { Clock } from '../common/time';
import type { UserEntity } from '../users/user.entity';
import { UserAccounts } from '../users/user-accounts';
import type { AddCollaboratorOption } from './collaborator.wire';
import { CollaborationStore } from './collaboration.store';

/** Collaborators: read by whoever reads the repository, managed by its administrators (as Forgejo). */
@Injectable()
export class CollaboratorsService {
  constructor(
    private readonly collaborations: CollaborationStore,
    private readonly users: UserAccounts,
    private readonly policy: RepositoryPolicy,
    private readonly clock: Clock,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
  ) {}

  /** GET …/collaborators: signed-in callers only (the route's mode), after the repository lookup (Forgejo's reqToken). */
  list(target: RepositoryTarget, page: PageQuery): Promise<Page<UserEntity>> {
    return this.collaborations.listUsers(target.repo.id, page);
  }

  /** GET …/collaborators/{c}: signed-in callers only (the route's mode); 204 when a collaborator, 404 when not, 422 for an unknown user, as Forgejo. */
  async assertCollaborator(target: RepositoryTarget, username: string): Promise<void> {
    const user = await this.users.byName(username);
    if (!user) throw new InvalidInputError(`user does not exist [uid: 0, name: ${username}]`);
    if (!(await this.collaborations.find(target.repo.id, user.id))) throw new NotFoundError();
  }

  /** PUT (the route admits repository admins): unknown user or an organisation 422, as Forgejo; idempotent. */
  async put(target: RepositoryTarget, username: string, option: AddCollaboratorOption): Promise<void> {
    const user = await this.users.byName(username);
    if (!user) throw new InvalidInputError(`user does not exist [uid: 0, name: ${username}]`);
    if (user.isOrganization) throw new InvalidInputError('organization cannot be a collaborator');
    const mode = parseAccessMode(option.permission ?? 'write') ?? AccessMode.Write;
    await this.transactions.run(async (tx) => {
      await this.collaborations.put(target.repo.id, user.id, mode, this.clock.nowUnix(), tx);
      await this.audit.record(tx, {
        action: 'collaborator.add',
        target: repositoryTarget(target),
        detail: { collaborator: user.name, permission: option.permission ?? 'write' },
      });
    });
  }

  /** DELETE (the route admits repository admins): an unknown user 422; not a collaborator is a no-op (204). */
  async remove(target: RepositoryTarget, username: string): Promise<void> {
    const user = await this.users.byName(username);
    if (!user) throw new InvalidInputError(`user does not exist [uid: 0, name: ${username}]`);
    await this.transactions.run(async (tx) => {
      if (await this.collaborations.delete(target.repo.id, user.id, tx)) {
        await this.audit.record(tx, { action: 'collaborator.remove', target: repositoryTarget(target), detail: { collaborator: user.name } });
      }
    });
  }

  /**
   * GET …/collaborators/{c}/permission: what the access policy gives that user on the repository. Order
   * (Forgejo): sign-in 401 (the route's mode), then who may ask (403: site and repository admins about anyone,
   * others about themselves), then the user (404).
   */
  async permissionOf(target: RepositoryTarget, username: string): Promise<{ mode: AccessMode; user: UserEntity }> {
    await assertMayQueryPermissionOf(target, username);
    const user = await this.users.byName(username);
    if (!user) throw new NotFoundError();
    const permission = await this.policy.permission(new AuthContext(user, 'password', null), target.repo, target.owner);
    return { mode: permission.mode, user };
  }
}

function repositoryTarget(target: RepositoryTarget) {
  return { type: 'repository' as const, id: target.repo.id, name: `${target.owner.name}/${target.repo.name}` };
}
