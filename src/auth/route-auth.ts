import { applyDecorators, CanActivate, createParamDecorator, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ForbiddenError, SIGN_IN_REQUIRED, UnauthorizedError } from '../common/errors';
import { ApiErrors } from '../common/openapi';
import { AuthContext } from './auth-context';
import { ScopeCategory, ScopeLevel } from './scopes';

/** Who may call a route at all, before any scope or repository permission is asked. */
export type RouteAudience = 'public' | 'authenticated-later' | 'signed-in' | 'site-admin';

export interface RouteAuth {
  access: RouteAudience;
  /** Token scope categories the route needs; read for GET/HEAD, write otherwise. */
  categories: ScopeCategory[];
  /** Only Basic auth with the account password, or the gateway's sign-in (token management, as Forgejo requires). */
  passwordOnly?: boolean;
}

export const ROUTE_AUTH = 'anvil:route-auth';

/**
 * Every route declares its auth once with one of these decorators; a route that declares nothing is refused
 * by the guard, and a test walks all routes to prove none does.
 */
export function Public(...categories: ScopeCategory[]) {
  return declare({ access: 'public', categories }, 401, 403);
}

/**
 * A route for signed-in callers whose sign-in comes after a lookup, as Forgejo orders it (a repository or
 * organisation first: 404 before 401). The scope is checked here; the route's own guard (RepositoryAssignment
 * for a repository route's mode) or its service (requireSignedIn) checks sign-in where the order says.
 */
export function AuthenticatedLater(...categories: ScopeCategory[]) {
  return declare({ access: 'authenticated-later', categories }, 401, 403);
}

export function SignedIn(...categories: ScopeCategory[]) {
  return declare({ access: 'signed-in', categories }, 401, 403);
}

export function PasswordSignedIn(...categories: ScopeCategory[]) {
  return declare({ access: 'signed-in', categories, passwordOnly: true }, 401, 403);
}

export function SiteAdmin() {
  return declare({ access: 'site-admin', categories: ['admin'] }, 401, 403);
}

function declare(auth: RouteAuth, ...errors: number[]) {
  return applyDecorators(SetMetadata(ROUTE_AUTH, auth), ApiErrors(...errors));
}

export function requiredLevel(method: string): ScopeLevel {
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}

/** Order (docs/check-order.md): scope 403 → sign-in 401 → auth method 401 → site admin 403. */
@Injectable()
export class RouteAuthGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const routeAuth = this.reflector.getAllAndOverride<RouteAuth | undefined>(ROUTE_AUTH, [context.getHandler(), context.getClass()]);
    if (!routeAuth) throw new Error(`route ${context.getClass().name}.${context.getHandler().name} declares no auth`);
    const request = context.switchToHttp().getRequest<Request>();
    const auth = request.auth ?? AuthContext.anonymous();
    const level = requiredLevel(request.method);
    if (auth.scopes) {
      const missing = routeAuth.categories.filter((category) => !auth.scopes!.allows(category, level));
      if (missing.length > 0) {
        const required = routeAuth.categories.map((category) => `${level}:${category}`).join(' ');
        throw new ForbiddenError(`token does not have at least one of required scope(s): [${required}]`);
      }
    }
    if (routeAuth.access === 'public' || routeAuth.access === 'authenticated-later') return true;
    if (!auth.isSignedIn) throw new UnauthorizedError(SIGN_IN_REQUIRED);
    if (routeAuth.passwordOnly && auth.method !== 'password' && auth.method !== 'reverse-proxy') throw new UnauthorizedError('auth method not allowed');
    if (routeAuth.access === 'site-admin' && !auth.isAdmin) throw new ForbiddenError('user should be the site admin');
    return true;
  }
}

/** The caller, as the authentication middleware resolved it. */
export const Caller = createParamDecorator((_data: unknown, context: ExecutionContext): AuthContext => {
  return context.switchToHttp().getRequest<Request>().auth ?? AuthContext.anonymous();
});

/** For routes whose order puts sign-in after a lookup (docs/check-order.md): call where the order says. */
export function requireSignedIn(auth: AuthContext): asserts auth is AuthContext & { user: NonNullable<AuthContext['user']> } {
  if (!auth.isSignedIn) throw new UnauthorizedError(SIGN_IN_REQUIRED);
}
