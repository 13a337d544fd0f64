import { InvalidInputError } from '../common/errors';
import { assertUsableUserName, USERNAME } from './user-names';

describe('user names', () => {
  it.each(['alice', 'a', 'A1', 'jean-luc.picard', 'snake_case', '42'])('accepts %s', (name) => {
    expect(USERNAME.test(name)).toBe(true);
  });

  it.each(['-lead', '_lead', '.lead', 'trail-', 'trail.', 'two--dashes', 'dot._dash', 'sp ace', 'ümlaut', ''])('refuses %j', (name) => {
    expect(USERNAME.test(name)).toBe(false);
  });

  it('refuses reserved names case-insensitively', () => {
    expect(() => assertUsableUserName('Admin')).toThrow(new InvalidInputError('name is reserved [name: Admin]'));
  });

  it('refuses reserved patterns', () => {
    expect(() => assertUsableUserName('me.atom')).toThrow('name pattern is not allowed [pattern: *.atom]');
  });

  it('accepts ordinary names', () => {
    expect(() => assertUsableUserName('keysmith')).not.toThrow();
  });
});
