import { runInNewContext } from 'node:vm';
import { v8Collector } from './v8-collector';

describe('V8 collector', () => {
  it('hands over V8’s gc function and leaves none on contexts made afterwards', () => {
    expect(typeof v8Collector()).toBe('function');
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });
});
