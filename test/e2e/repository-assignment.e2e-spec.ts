import * as fs from 'node:fs';
import * as path from 'node:path';
import { ModulesContainer, Reflector } from '@nestjs/core';
import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { BodyGuard } from '../../src/http/body-guard';
import { REPOSITORY_ROUTE, RepositoryAssignment } from '../../src/repos/repository-assignment';
import { startTestApp, TestApp } from '../support/test-app';

/** Every source file under src/, relative to it. */
function sources(dir = path.join(__dirname, '../../src'), base = ''): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(base, entry.name);
    if (entry.isDirectory()) return sources(path.join(dir, entry.name), relative);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [relative] : [];
  });
}

describe('one access policy: every repository route resolves its repository and access one way', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(() => t.close());

  it('every route with :owner and :repo declares @RepositoryRoute, whose guard runs before any body is read', () => {
    const reflector = t.app.get(Reflector);
    const controllers = [...t.app.get(ModulesContainer).values()].flatMap((module) => [...module.controllers.values()]);
    const missing: string[] = [];
    let repositoryRoutes = 0;
    for (const wrapper of controllers) {
      const prototype = (wrapper.metatype as { prototype: Record<string, unknown> }).prototype;
      for (const method of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[method];
        if (method === 'constructor' || typeof handler !== 'function') continue;
        const paths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
        if (paths === undefined || Reflect.getMetadata(METHOD_METADATA, handler) === undefined) continue;
        const names = ([] as string[]).concat(paths);
        if (!names.some((name) => /(^|\/):owner\/:repo(\/|$)/.test(name))) continue;
        repositoryRoutes += 1;
        const guards = (Reflect.getMetadata(GUARDS_METADATA, handler) ?? []) as unknown[];
        const declared = reflector.get(REPOSITORY_ROUTE, handler as Function) !== undefined;
        const assigned = guards.includes(RepositoryAssignment);
        const beforeBody = !guards.includes(BodyGuard) || guards.indexOf(RepositoryAssignment) < guards.indexOf(BodyGuard);
        if (!declared || !assigned || !beforeBody) missing.push(`${(wrapper.metatype as Function).name}.${method} ${names.join(',')}`);
      }
    }
    expect(repositoryRoutes).toBeGreaterThan(40);
    expect(missing).toEqual([]);
  });

  it('no code outside the access policy looks a repository up by name for a route or decides access itself', () => {
    const offenders: string[] = [];
    const allowedLookup = new Set(['repos/repository-assignment.ts', 'repos/repository.store.ts']);
    for (const file of sources()) {
      const text = fs.readFileSync(path.join(__dirname, '../../src', file), 'utf8');
      if (/findWithOwnerByNames\(/.test(text) && !allowedLookup.has(file)) offenders.push(`${file}: looks a repository up by name`);
      if (!file.startsWith('access/') && /\b(resolvePermission|readableWithoutGrants|AccessStore)\b/.test(text))
        offenders.push(`${file}: uses the policy's internals`);
      // Repository doors ask the resolved target, never who the caller is.
      if (
        /^(content|releases|labels|statuses|languages)\/|^mirrors\/mirror-sync\.service/.test(file) &&
        /\b(viewer|caller)\.isAdmin\b|organizations\.isOwner\(|ownerId === /.test(text)
      ) {
        offenders.push(`${file}: decides repository access itself`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
