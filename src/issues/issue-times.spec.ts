import { InvalidInputError } from '../common/errors';
import { endOfDay, parseRfc3339, queryTime } from './issue-times';

describe('issue times', () => {
  it('reads RFC 3339 with a zone, and nothing else', () => {
    expect(parseRfc3339('2025-01-31T12:00:00Z')).toBe(1738324800);
    expect(parseRfc3339('2025-01-31T14:00:00+02:00')).toBe(1738324800);
    expect(parseRfc3339('2025-01-31')).toBeUndefined();
    expect(parseRfc3339('yesterday')).toBeUndefined();
  });

  it('refuses a bad since/before with 422 and ignores an empty one', () => {
    expect(() => queryTime('nope', 'since')).toThrow(InvalidInputError);
    expect(queryTime('', 'since')).toBeUndefined();
    expect(queryTime(['2025-01-31T12:00:00Z'], 'since')).toBe(1738324800);
  });

  it('puts a due date at the last second of its day, in its own zone', () => {
    expect(endOfDay('2025-01-31T08:00:00Z')).toBe(Date.UTC(2025, 0, 31, 23, 59, 59) / 1000);
    expect(endOfDay('2025-01-31T08:00:00+02:00')).toBe(Date.UTC(2025, 0, 31, 21, 59, 59) / 1000);
    expect(endOfDay('soon')).toBeUndefined();
  });
});
