import { taggerTime } from './git-data.mapper';

describe('tagger time', () => {
  it('writes the time in the tagger’s own offset, Z for UTC', () => {
    expect(taggerTime(1700000000, '+0000')).toBe('2023-11-14T22:13:20Z');
    expect(taggerTime(1700000000, '+0200')).toBe('2023-11-15T00:13:20+02:00');
    expect(taggerTime(1700000000, '-0530')).toBe('2023-11-14T16:43:20-05:30');
  });
});
