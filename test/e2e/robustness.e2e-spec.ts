import { makeOrg, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Bad input gets a clear 4xx, never a 500: every operation in the OpenAPI document is called, as a site admin
 * (so that permission checks do not stop the request early), with hostile path parameters, mistyped bodies
 * and odd content types.
 */
describe('no input reaches a 500', () => {
  let t: TestApp;
  let admin: TestUser;
  let operations: { method: string; path: string; bodyFields: Record<string, { type?: string }> }[];

  beforeAll(async () => {
    t = await startTestApp();
    admin = await makeUser(t, { admin: true });
    await makeOrg(t, admin.user, { name: 'acme' });
    const document = (await t.http.get('/swagger.v1.json').expect(200)).body as {
      paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: { $ref?: string } }> } }>>;
      components: { schemas: Record<string, { properties?: Record<string, { type?: string }> }> };
    };
    operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => {
        const ref = operation.requestBody?.content?.['application/json']?.schema?.$ref;
        const schema = ref ? document.components.schemas[ref.split('/').pop()!] : undefined;
        return { method, path, bodyFields: schema?.properties ?? {} };
      }),
    );
  });
  afterAll(() => t.close());

  const hostileSegments = [
    'x',
    '..',
    '%2e%2e',
    '%00',
    'a'.repeat(300),
    '-1',
    '0',
    '99999999999999999999',
    '1.5',
    'ñ%C3%B1',
    '%F0%9F%92%A5',
    "'%20OR%201=1--",
    'acme',
  ];

  function fill(path: string, value: string): string {
    return path.replace(/\{[^}]+\}/g, value);
  }

  /** Every field with a value of the wrong type. */
  function mistyped(fields: Record<string, { type?: string }>): Record<string, unknown> {
    const wrong: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(fields)) {
      wrong[name] =
        field.type === 'string' ? { nested: true } : field.type === 'boolean' ? 'maybe' : field.type === 'array' ? 'not-an-array' : 'x'.repeat(70_000);
    }
    return wrong;
  }

  /** Every field with an extreme value of the right type. */
  function extreme(fields: Record<string, { type?: string }>): Record<string, unknown> {
    const values: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(fields)) {
      values[name] =
        field.type === 'string'
          ? '\u0000<script>' + 'é'.repeat(5000)
          : field.type === 'boolean'
            ? true
            : field.type === 'array'
              ? ['\u0000', '', 'x'.repeat(5000)]
              : field.type === 'integer' || field.type === 'number'
                ? 9007199254740993
                : null;
    }
    return values;
  }

  it('covers the whole API', () => {
    expect(operations.length).toBeGreaterThan(50);
  });

  it('holds for hostile path parameters', async () => {
    const failures: string[] = [];
    for (const operation of operations) {
      for (const segment of hostileSegments) {
        const url = `/api/v1${fill(operation.path, segment)}`;
        const response = await t.http[operation.method as 'get'](url).set(withToken(admin.token)).set('Content-Type', 'application/json').send('{}');
        if (response.status >= 500) failures.push(`${operation.method.toUpperCase()} ${url} → ${response.status} ${response.text.slice(0, 120)}`);
      }
    }
    expect(failures).toEqual([]);
    // Hundreds of sequential requests: a limit for a loaded machine, not a speed claim.
  }, 300_000);

  it('holds for mistyped and extreme bodies and odd content types', async () => {
    const failures: string[] = [];
    for (const operation of operations.filter((op) => op.method !== 'get')) {
      const url = `/api/v1${fill(operation.path, 'acme')}`;
      const attempts: [string, string | Buffer][] = [
        ['application/json', JSON.stringify(mistyped(operation.bodyFields))],
        ['application/json', JSON.stringify(extreme(operation.bodyFields))],
        ['application/json', '{"a":'],
        ['application/json', '"just a string"'],
        ['application/json', '{"__proto__": {"admin": true}, "constructor": {"prototype": {}}}'],
        ['application/x-www-form-urlencoded', 'name=%ZZ&&=&private=maybe'],
        ['multipart/form-data; boundary=xyz', '--xyz\r\nbroken'],
        ['text/plain', Buffer.from([0xff, 0xfe, 0x00, 0x41])],
      ];
      for (const [type, body] of attempts) {
        const response = await t.http[operation.method as 'post'](url).set(withToken(admin.token)).set('Content-Type', type).send(body);
        if (response.status >= 500) failures.push(`${operation.method.toUpperCase()} ${url} [${type}] → ${response.status} ${response.text.slice(0, 120)}`);
      }
    }
    expect(failures).toEqual([]);
    // Hundreds of sequential requests: a limit for a loaded machine, not a speed claim.
  }, 300_000);
});
