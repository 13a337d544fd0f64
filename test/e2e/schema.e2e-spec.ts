import { startTestApp, TestApp } from '../support/test-app';

describe('database schema', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('after all migrations, the schema matches the entities exactly (no pending diff)', async () => {
    const pending = await t.dataSource.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((query) => query.query)).toEqual([]);
  });

  it('has run every migration', async () => {
    expect(await t.dataSource.showMigrations()).toBe(false);
  });
});
