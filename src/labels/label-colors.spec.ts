import { InvalidInputError } from '../common/errors';
import { normalizeColor } from './label-colors';

describe('label colours', () => {
  it('accepts six or three hex digits, with or without #, in any case', () => {
    expect(normalizeColor('00AABB')).toBe('#00aabb');
    expect(normalizeColor('#00aabb')).toBe('#00aabb');
    expect(normalizeColor(' #AbC ')).toBe('#aabbcc');
    expect(normalizeColor('fff')).toBe('#ffffff');
  });

  it('refuses anything else with 422', () => {
    for (const bad of ['', '#12345', 'gggggg', '#1234567', 'red']) expect(() => normalizeColor(bad)).toThrow(InvalidInputError);
  });
});
