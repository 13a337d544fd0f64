import { isValidTopic, joinTopics, sortTopics, splitTopics } from './topic-names';

describe('topic names', () => {
  it('accepts lower-case letters, digits, dots and dashes, starting with a letter or digit, up to 35 characters', () => {
    expect(isValidTopic('go')).toBe(true);
    expect(isValidTopic('k8s.io-tools')).toBe(true);
    expect(isValidTopic('a'.repeat(35))).toBe(true);
    expect(isValidTopic('a'.repeat(36))).toBe(false);
    expect(isValidTopic('-lead')).toBe(false);
    expect(isValidTopic('Upper')).toBe(false);
    expect(isValidTopic('with space')).toBe(false);
    expect(isValidTopic('a,b')).toBe(false);
  });

  it('normalizes as Forgejo: trims, lower-cases, drops empties and repeats, keeps the invalid apart', () => {
    expect(sortTopics([' Go ', 'go', '', 'rust', 'bad topic', '-x'])).toEqual({ valid: ['go', 'rust'], invalid: ['bad topic', '-x'] });
  });

  it('stores topics sorted and comma-joined, and reads them back', () => {
    expect(joinTopics(['rust', 'go'])).toBe('go,rust');
    expect(splitTopics(joinTopics(['rust', 'go']))).toEqual(['go', 'rust']);
    expect(splitTopics('')).toEqual([]);
  });
});
