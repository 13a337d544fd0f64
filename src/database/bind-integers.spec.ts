import { openDatabase } from './data-source';
import { UserEntity } from '../users/user.entity';

describe('SQLite integer parameters are bound, not written into the SQL', () => {
  it('gives one statement text for every id, and finds the same rows', async () => {
    const dataSource = await openDatabase({ database: { type: 'sqlite', file: ':memory:' } } as never);
    try {
      const [first] = dataSource.driver.escapeQueryWithParameters('SELECT * FROM user WHERE id = :id AND flag = :flag', { id: 1, flag: true }, {});
      const [second, parameters] = dataSource.driver.escapeQueryWithParameters(
        'SELECT * FROM user WHERE id = :id AND flag = :flag',
        { id: 987654, flag: false },
        {},
      );
      expect(first).toBe(second);
      expect(first).not.toContain('987654');
      expect(parameters).toEqual([987654n, 0]);
      // Fractions keep TypeORM's own handling; finds by id still find.
      const [withFraction] = dataSource.driver.escapeQueryWithParameters('SELECT :x', { x: 1.5 }, {});
      expect(withFraction).toBe('SELECT 1.5');
      await dataSource.query('CREATE TABLE bound (id INTEGER PRIMARY KEY, v TEXT)');
      await dataSource.query("INSERT INTO bound VALUES (2, 'two'), (3, 'three')");
      const byId = (id: number) => dataSource.createQueryBuilder().select('b.v', 'v').from('bound', 'b').where('b.id = :id', { id }).getRawOne<{ v: string }>();
      expect(await byId(3)).toEqual({ v: 'three' });
      expect(await byId(2)).toEqual({ v: 'two' });
      expect(await byId(4)).toBeUndefined();
      expect(await dataSource.getRepository(UserEntity).findOneBy({ id: 424242 })).toBeNull();
    } finally {
      await dataSource.destroy();
    }
  });
});
