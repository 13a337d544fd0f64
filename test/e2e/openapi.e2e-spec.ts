import * as fs from 'node:fs';
import * as path from 'node:path';
import { ModulesContainer, Reflector } from '@nestjs/core';
import { GUARDS_METADATA, INTERCEPTORS_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { BodyGuard, readsBody } from '../../src/http/body-guard';
import { ROUTE_AUTH } from '../../src/auth/route-auth';
import { openApiDocument } from '../../src/bootstrap';
import { forgejoOperation } from '../../src/common/operation-ids';
import { fixedSegments, isPrefiltered, routerStack } from '../../src/http/route-prefilter';
import { startTestApp, TestApp } from '../support/test-app';

describe('OpenAPI document and route declarations', () => {
  let t: TestApp;
  let document: {
    info: { version: string };
    servers: { url: string }[];
    paths: Record<string, Record<string, { responses: Record<string, unknown>; operationId: string; tags: string[] }>>;
    components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
  };

  beforeAll(async () => {
    t = await startTestApp();
    document = (await t.http.get('/swagger.v1.json').expect(200)).body;
  });
  afterAll(() => t.close());

  it('has info.version 1.1.1 and the /api/v1 base path', () => {
    expect(document.info.version).toBe('1.1.1');
    // Relative, so Swagger UI works from whatever host the page was opened.
    expect(document.servers).toEqual([{ url: '/api/v1' }]);
    expect(Object.keys(document.paths)).toContain('/version');
    expect(Object.keys(document.paths).every((path) => !path.startsWith('/api/v1'))).toBe(true);
  });

  it('declares the token header, basic auth and the query token security schemes', () => {
    expect(document.components.securitySchemes).toMatchObject({
      BasicAuth: { type: 'http', scheme: 'basic' },
      AuthorizationHeaderToken: { type: 'apiKey', in: 'header', name: 'Authorization' },
      Token: { type: 'apiKey', in: 'query', name: 'token' },
      AccessToken: { type: 'apiKey', in: 'query', name: 'access_token' },
    });
  });

  it('builds error examples from ROOT_URL, with a distinct message for 401 and 403', () => {
    const user = document.paths['/user'].get.responses as Record<string, { content?: Record<string, { example?: { message: string; url: string } }> }>;
    const example = (status: string) => user[status]?.content?.['application/json']?.example;
    expect(example('401')).toEqual({ message: 'token is required', url: 'http://anvil.test/api/swagger' });
    expect(example('403')?.url).toBe('http://anvil.test/api/swagger');
    expect(example('403')?.message).not.toBe(example('401')?.message);
    expect(JSON.stringify(document)).not.toContain('localhost:3000');
  });

  it("names every operation Forgejo also has with Forgejo's operation id and tags, and every other one in camelCase", () => {
    const wrong: string[] = [];
    const ids: string[] = [];
    let matched = 0;
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        ids.push(operation.operationId);
        const known = forgejoOperation(method, path);
        if (known) {
          matched += 1;
          if (operation.operationId !== known.operationId || JSON.stringify(operation.tags) !== JSON.stringify(known.tags)) {
            wrong.push(`${method.toUpperCase()} ${path}: ${operation.operationId} [${operation.tags}] ≠ ${known.operationId} [${known.tags}]`);
          }
        } else if (!/^[a-z][A-Za-z0-9]*$/.test(operation.operationId)) {
          wrong.push(`${method.toUpperCase()} ${path}: ${operation.operationId} is not camelCase`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(matched).toBeGreaterThanOrEqual(59);
    expect(document.paths['/user'].get.operationId).toBe('userGetCurrent');
    expect(document.paths['/org/{org}/repos'].post.operationId).toBe('createOrgRepoDeprecated');
    // Forgejo corrected the typo adminDEleteQuotaRule (#10217); Anvil follows the corrected name.
    expect(document.paths['/admin/quota/rules/{quotarule}'].delete.operationId).toBe('adminDeleteQuotaRule');
  });

  it('names the schemas as the spec does', () => {
    expect(Object.keys(document.components.schemas)).toEqual(expect.arrayContaining(['User', 'AccessToken', 'ServerVersion', 'APIError']));
  });

  it('documents a success and an error response on every operation', () => {
    const undocumented: string[] = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const statuses = Object.keys(operation.responses ?? {});
        const success = statuses.some((status) => status.startsWith('2'));
        const failure = statuses.some((status) => /^[45]/.test(status));
        if (!success || !failure) undocumented.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(undocumented).toEqual([]);
  });

  it('matches the committed openapi/swagger.v1.json (run `npm run openapi` after changing the API)', () => {
    const committed = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'openapi', 'swagger.v1.json'), 'utf8')) as unknown;
    // Built from the routes now, as `npm run openapi` does: the served document is the committed one.
    expect(JSON.parse(JSON.stringify(openApiDocument(t.app, t.config)))).toEqual(committed);
    expect(document).toEqual(committed);
  });

  it("serves the committed document with this server's ROOT_URL in it", async () => {
    const other = await startTestApp({ ROOT_URL: 'https://code.example.com/anvil/' });
    try {
      const served = (await other.http.get('/swagger.v1.json').expect(200)).body as typeof document;
      expect(served.servers).toEqual([{ url: '/anvil/api/v1' }]);
      const text = JSON.stringify(served);
      expect(text).toContain('"https://code.example.com/anvil/api/swagger"');
      expect(text).not.toContain('anvil.test');
    } finally {
      await other.close();
    }
  });

  it('serves Swagger UI at /api/swagger', async () => {
    const response = await t.http.get('/api/swagger').redirects(1).expect(200);
    expect(response.text).toContain('swagger');
  });

  it('routes of the running application are tried with the literal-segment check first (route-prefilter.ts)', () => {
    const routes = routerStack(t.app.getHttpAdapter().getInstance()).filter((layer) => layer.route);
    expect(routes.length).toBeGreaterThan(100);
    // All but the few whose patterns start with a parameter (`/:username.keys`) and have no literal after it.
    const unchecked = routes.filter((layer) => !isPrefiltered(layer)).map((layer) => String(layer.rawPath));
    expect(unchecked.every((pattern) => fixedSegments(pattern) === null)).toBe(true);
    expect(unchecked.length).toBeLessThan(10);
  });

  it('every route declares its auth (public, signed in, site admin)', () => {
    const reflector = t.app.get(Reflector);
    const controllers = [...t.app.get(ModulesContainer).values()].flatMap((module) => [...module.controllers.values()]);
    const undeclared: string[] = [];
    let routes = 0;
    for (const wrapper of controllers) {
      const prototype = (wrapper.metatype as { prototype: Record<string, unknown> }).prototype;
      for (const method of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[method];
        if (method === 'constructor' || typeof handler !== 'function' || Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
        routes += 1;
        if (!reflector.getAllAndOverride(ROUTE_AUTH, [handler, wrapper.metatype as Function])) {
          undeclared.push(`${wrapper.name}.${method}`);
        }
      }
    }
    expect(routes).toBeGreaterThan(5);
    expect(undeclared).toEqual([]);
  });

  it('no route has an interceptor; the routes that read a body, and only they, have BodyGuard as their last guard', () => {
    const controllers = [...t.app.get(ModulesContainer).values()].flatMap((module) => [...module.controllers.values()]);
    const wrong: string[] = [];
    let readers = 0;
    let guardedFirst = 0;
    for (const wrapper of controllers) {
      const controller = wrapper.metatype as Function;
      const prototype = (controller as { prototype: Record<string, unknown> }).prototype;
      expect(Reflect.getMetadata(INTERCEPTORS_METADATA, controller)).toBeUndefined();
      expect((Reflect.getMetadata(GUARDS_METADATA, controller) ?? []) as unknown[]).not.toContain(BodyGuard);
      for (const method of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[method];
        if (method === 'constructor' || typeof handler !== 'function' || Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
        const interceptors = (Reflect.getMetadata(INTERCEPTORS_METADATA, handler) ?? []) as unknown[];
        const guards = (Reflect.getMetadata(GUARDS_METADATA, handler) ?? []) as unknown[];
        const reads = readsBody(controller, handler as Function);
        if (reads) readers += 1;
        if (reads && guards.length > 1) guardedFirst += 1;
        const bodyGuardRight = reads
          ? guards.indexOf(BodyGuard) === guards.length - 1 && guards.filter((guard) => guard === BodyGuard).length === 1
          : !guards.includes(BodyGuard);
        if (interceptors.length > 0 || !bodyGuardRight) wrong.push(`${wrapper.name}.${method}`);
      }
    }
    // Rate-limited routes that read a body (markdown, token creation, key uploads) count the call before reading.
    expect(guardedFirst).toBeGreaterThan(0);
    expect(readers).toBeGreaterThan(10);
    expect(wrong).toEqual([]);
  });
});
