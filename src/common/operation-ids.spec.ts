import forgejo from '../../openapi/forgejo-operation-ids.json';
import { forgejoOperation, operationKey } from './operation-ids';

describe("Forgejo's operation ids (openapi/forgejo-operation-ids.json)", () => {
  it.each([
    ['GET', '/user', 'userGetCurrent'],
    ['GET', '/repos/search', 'repoSearch'],
    ['POST', '/org/{org}/repos', 'createOrgRepoDeprecated'],
    ['GET', '/user/followers', 'userCurrentListFollowers'],
    ['POST', '/admin/quota/rules', 'adminCreateQuotaRule'],
  ])('%s %s is %s', (method, path, id) => {
    expect(forgejoOperation(method, path)?.operationId).toBe(id);
  });

  it('matches paths whatever their parameters are called', () => {
    expect(forgejoOperation('patch', '/repos/{o}/{r}')).toEqual({ operationId: 'repoEdit', tags: ['repository'] });
    expect(operationKey('get', '/users/{username}/keys')).toBe('GET /users/{}/keys');
  });

  it('knows nothing Forgejo does not have', () => {
    expect(forgejoOperation('GET', '/no/such/thing')).toBeUndefined();
    expect(forgejoOperation('PUT', '/user')).toBeUndefined();
  });

  it('holds one entry per operation, every id distinct, letters and digits only', () => {
    const operations = Object.values(forgejo.operations as Record<string, { operationId: string; tags: string[] }>);
    expect(operations.length).toBeGreaterThan(400);
    const ids = operations.map((operation) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    // A few are PascalCase in Forgejo (GetTree, GetBlob); kept as they are, since SDKs use them.
    expect(ids.filter((id) => !/^[A-Za-z][A-Za-z0-9]*$/.test(id))).toEqual([]);
    expect(operations.every((operation) => operation.tags.length > 0)).toBe(true);
  });
});
