import { linkHeader, pageQuery } from './paging';

const limits = { defaultLimit: 30, maxLimit: 50 };

describe('pageQuery', () => {
  it.each([
    [{}, { page: 1, limit: 30, offset: 0 }],
    [
      { page: '3', limit: '10' },
      { page: 3, limit: 10, offset: 20 },
    ],
    [
      { page: '0', limit: '0' },
      { page: 1, limit: 30, offset: 0 },
    ],
    [
      { page: '-2', limit: '-5' },
      { page: 1, limit: 30, offset: 0 },
    ],
    [
      { page: 'two', limit: 'many' },
      { page: 1, limit: 30, offset: 0 },
    ],
    [
      { page: '1.5', limit: '2.5' },
      { page: 1, limit: 30, offset: 0 },
    ],
    [{ limit: '500' }, { page: 1, limit: 50, offset: 0 }],
    [{ page: ['2', '3'] }, { page: 1, limit: 30, offset: 0 }],
  ])('%j → %j', (query, expected) => {
    expect(pageQuery(query, limits)).toEqual(expected);
  });
});

describe('linkHeader', () => {
  const base = 'http://h/api/v1';

  it('is absent for a single page', () => {
    expect(linkHeader(base, '/x', {}, 1, 10, 10)).toBeUndefined();
    expect(linkHeader(base, '/x', {}, 1, 10, 0)).toBeUndefined();
  });

  it('on the first page has next and last', () => {
    expect(linkHeader(base, '/x', { limit: '10' }, 1, 10, 25)).toBe(
      '<http://h/api/v1/x?limit=10&page=2>; rel="next",<http://h/api/v1/x?limit=10&page=3>; rel="last"',
    );
  });

  it('in the middle has all four, in order', () => {
    const link = linkHeader(base, '/x', { page: '2' }, 2, 10, 25)!;
    expect(link.split(',').map((entry) => /rel="(\w+)"/.exec(entry)![1])).toEqual(['next', 'last', 'first', 'prev']);
  });

  it('re-encodes query keys in sorted order', () => {
    expect(linkHeader(base, '/x', { q: 'a b', b: '1' }, 2, 1, 2)).toBe(
      '<http://h/api/v1/x?b=1&page=1&q=a+b>; rel="first",<http://h/api/v1/x?b=1&page=1&q=a+b>; rel="prev"',
    );
  });
});
