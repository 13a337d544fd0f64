import 'reflect-metadata';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { RequestMethod } from '@nestjs/common';
import { ROUTE_AUTH, RouteAuth } from '../auth/route-auth';
import { REPOSITORY_ROUTE, RepositoryRouteOptions } from './repository-assignment';

// The one door of repository writes (docs/check-order.md): every write route on a repository declares what it
// asks of the caller, and no code outside src/access/ decides repository access itself.

const SRC = path.join(__dirname, '..');

function files(dir: string, suffix: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return files(full, suffix);
    return entry.name.endsWith(suffix) && !entry.name.endsWith('.spec.ts') ? [full] : [];
  });
}

interface Handler {
  name: string;
  method: RequestMethod;
  paths: string[];
  route: RepositoryRouteOptions | undefined;
  auth: RouteAuth | undefined;
}

function handlers(): Handler[] {
  const found: Handler[] = [];
  for (const file of files(SRC, '.controller.ts')) {
    for (const exported of Object.values(require(file) as Record<string, unknown>)) {
      if (typeof exported !== 'function' || Reflect.getMetadata(PATH_METADATA, exported) === undefined) continue;
      const prototype = (exported as { prototype: Record<string, unknown> }).prototype;
      for (const key of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[key];
        if (key === 'constructor' || typeof handler !== 'function') continue;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        const paths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
        if (method === undefined || paths === undefined) continue;
        found.push({
          name: `${(exported as Function).name}.${key}`,
          method,
          paths: ([] as string[]).concat(paths),
          route: Reflect.getMetadata(REPOSITORY_ROUTE, handler) as RepositoryRouteOptions | undefined,
          auth: (Reflect.getMetadata(ROUTE_AUTH, handler) ?? Reflect.getMetadata(ROUTE_AUTH, exported)) as RouteAuth | undefined,
        });
      }
    }
  }
  return found;
}

const WRITES = new Set([RequestMethod.POST, RequestMethod.PUT, RequestMethod.PATCH, RequestMethod.DELETE]);
const onRepository = (handler: Handler) => handler.paths.some((name) => /(^|\/)repos\/:owner\/:repo(\/|$)/.test(name));

/**
 * The direct access checks a service might make; the access policy (src/access/) answers them, the repository
 * guard asks them from the route's declaration, and services ask the named rules of access/repository-rules.ts.
 */
const DIRECT_CHECK = /[tT]arget\.(assertCanWrite|assertAdmin|assertOwner|canWrite|permission)\(|\(await [\w.]*[pP]olicy\.permission\([^)]*\)\)\./;

describe('one door for repository writes', () => {
  const all = handlers();

  it('finds the routes', () => {
    expect(all.filter(onRepository).length).toBeGreaterThan(100);
    expect(all.filter((handler) => onRepository(handler) && WRITES.has(handler.method)).length).toBeGreaterThan(60);
  });

  it('every write route on /repos/{owner}/{repo} declares its mode on @RepositoryRoute', () => {
    const undeclared = all
      .filter((handler) => onRepository(handler) && WRITES.has(handler.method) && handler.route?.mode === undefined)
      .map((handler) => handler.name);
    expect(undeclared).toEqual([]);
  });

  it('a route whose mode asks for sign-in is not @Public: it declares @AuthenticatedLater (or @SignedIn)', () => {
    const wrong = all
      .filter((handler) => handler.route?.mode !== undefined && handler.route.mode !== 'read' && handler.auth?.access === 'public')
      .map((handler) => handler.name);
    expect(wrong).toEqual([]);
  });

  it('a route declared @AuthenticatedLater checks sign-in at its door (a repository route of a signing-in mode)', () => {
    const unchecked = all
      .filter((handler) => handler.auth?.access === 'authenticated-later' && onRepository(handler))
      .filter((handler) => handler.route?.mode === undefined || handler.route.mode === 'read')
      .map((handler) => handler.name);
    expect(unchecked).toEqual([]);
  });

  it('no code outside src/access/ checks repository access itself', () => {
    const offenders = files(SRC, '.ts')
      .map((file) => path.relative(SRC, file).split(path.sep).join('/'))
      .filter((file) => !file.startsWith('access/'))
      .filter((file) => DIRECT_CHECK.test(fs.readFileSync(path.join(SRC, file), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('the check of direct access checks recognises one', () => {
    expect(DIRECT_CHECK.test("await target.assertCanWrite('repo.code');")).toBe(true);
    expect(DIRECT_CHECK.test('if (!(await target.permission()).isAdmin) throw new ForbiddenError();')).toBe(true);
    expect(DIRECT_CHECK.test("const writer = await target.canWrite('repo.issues');")).toBe(true);
    expect(DIRECT_CHECK.test("if (!(await headTarget.canWrite('repo.code'))) return;")).toBe(true);
    expect(DIRECT_CHECK.test('if (!(await this.repositoryPolicy.permission(viewer, repo, org)).isAdmin) throw new ForbiddenError();')).toBe(true);
    // Asking the policy for a target's permission, to hand it on, decides nothing.
    expect(DIRECT_CHECK.test('new RepositoryTarget(repo, owner, viewer, () => this.policy.permission(viewer, repo, owner), null)')).toBe(false);
    // The quota's check of the same name is no access check.
    expect(DIRECT_CHECK.test("await this.quota.assertCanWrite(owner, 'size:repos:all');")).toBe(false);
  });
});
