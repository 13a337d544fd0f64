import { applyDecorators, CanActivate, createParamDecorator, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import type { AccessGrants } from '../access/access-policy';
import { RepositoryPolicy, RepositoryTarget } from '../access/repository-policy';
import { admitToRepositoryRoute, RepositoryRouteRule, writtenUnits } from '../access/repository-route-rule';
import { AuthContext } from '../auth/auth-context';
import { GuardedBeforeBody } from '../http/body-guard';
import { NotFoundError } from '../common/errors';
import { ApiParam } from '@nestjs/swagger';
import type { UserEntity } from '../users/user.entity';
import type { RepositoryEntity } from './repository.entity';
import { RepositoryStore } from './repository.store';

declare module 'express-serve-static-core' {
  interface Request {
    /** The repository of a `{owner}/{repo}` route with the caller's access, set by RepositoryAssignment. */
    repository?: RepositoryTarget;
  }
}

export const REPOSITORY_ROUTE = 'anvil:repository-route';

/** How a repository route is entered: its read unit and what it asks of the caller (repository-route-rule.ts). */
export type RepositoryRouteOptions = RepositoryRouteRule;

/**
 * A route on one repository named by its `:owner` and `:repo` parameters: RepositoryAssignment resolves it and
 * the caller's access before the handler (and before any body is read), and the handler takes the result with
 * `@TargetRepository()`. Every repository route declares this, and every write route its `mode`; a route whose
 * mode asks for more than reading declares `@AuthenticatedLater`, as sign-in comes after the lookup. Tests walk
 * the routes to prove it (repository-routes.spec.ts).
 */
export function RepositoryRoute(options: RepositoryRouteOptions = {}) {
  if (options.mode === 'write') writtenUnits(options);
  return applyDecorators(
    SetMetadata(REPOSITORY_ROUTE, options),
    GuardedBeforeBody(RepositoryAssignment),
    ApiParam({ name: 'owner', type: String, required: true }),
    ApiParam({ name: 'repo', type: String, required: true }),
  );
}

/**
 * The by-name lookup of a repository route, for RepositoryAssignment alone. Nest builds the guard in every module
 * whose controllers use it, so this door is exported with the guard; RepositoryStore itself is not. It returns
 * the store's one read as it is (no extra query, no extra await).
 */
@Injectable()
export class RepositoryRouteLookup {
  constructor(private readonly store: RepositoryStore) {}

  /**
   * A repository and its owner by their names (case-insensitive), in one read of two unique indexes; with
   * `grantsOf`, that user's grants on it in the same read.
   */
  findWithOwnerByNames(
    ownerName: string,
    repoName: string,
    grantsOf: number | null,
  ): Promise<{ repo: RepositoryEntity; owner: UserEntity; grants: AccessGrants | null } | null> {
    return this.store.findWithOwnerByNames(ownerName, repoName, grantsOf);
  }
}

/**
 * Forgejo's repoAssignment: once per request, the owner and repository by name with the caller's grants on it
 * (unknown → 404), then the access policy's read rule (unreadable → 404, public-only token on a non-public
 * repository → 403), then the route's mode (sign-in 401 → permission 403 → archived 423). Runs after the
 * route's auth guard (scopes) and before any body is read, so the order stays scope → lookup → read →
 * public-only → sign-in → permission → archived → body.
 */
@Injectable()
export class RepositoryAssignment implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly repositories: RepositoryRouteLookup,
    private readonly policy: RepositoryPolicy,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const options = this.reflector.get<RepositoryRouteOptions | undefined>(REPOSITORY_ROUTE, context.getHandler()) ?? {};
    const request = context.switchToHttp().getRequest<Request>();
    const ownerName = request.params.owner;
    const repoName = request.params.repo;
    if (typeof ownerName !== 'string' || typeof repoName !== 'string') throw new Error('a repository route needs :owner and :repo');
    const viewer = request.auth ?? AuthContext.anonymous();
    // The caller's grants come with the repository (one statement, not two) when the policy may need them.
    const found = await this.repositories.findWithOwnerByNames(ownerName, repoName, this.policy.grantsHolder(viewer));
    if (!found) throw new NotFoundError();
    const target = await this.policy.open(viewer, found.repo, found.owner, options.unit, found.grants);
    await admitToRepositoryRoute(target, options);
    request.repository = target;
    return true;
  }
}

/** The repository RepositoryAssignment resolved for this request. */
export const TargetRepository = createParamDecorator((_data: unknown, context: ExecutionContext): RepositoryTarget => {
  const target = context.switchToHttp().getRequest<Request>().repository;
  if (!target) throw new Error('route has no @RepositoryRoute()');
  return target;
});
