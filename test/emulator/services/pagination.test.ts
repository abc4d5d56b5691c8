import { describe, expect, it } from 'vitest';
import { DEFAULT_PAGE_SIZE } from '../../../src/api/limits.js';
import { filterItems, paginate, wildcardMatcher } from '../../../src/emulator/services/pagination.js';

const numbers = (count: number) => Array.from({ length: count }, (_, i) => i + 1);

describe('paginate', () => {
  it('defaults to page 1 of 20', () => {
    expect(DEFAULT_PAGE_SIZE).toBe(20);
    const page = paginate(numbers(45), {});
    expect(page.pagination).toEqual({ total_items: 45, page_number: 1, page_size: 20, total_pages: 3 });
    expect(page.data).toEqual(numbers(20));
  });

  it.each([
    [0, 20, 0],
    [1, 20, 1],
    [20, 20, 1],
    [21, 20, 2],
    [40, 20, 2],
    [41, 20, 3],
    [7, 1, 7],
    [7, 3, 3],
  ])('counts %i items in pages of %i as %i pages', (count, size, pages) => {
    expect(paginate(numbers(count), { size }).pagination.total_pages).toBe(pages);
  });

  it('cuts the requested page, the last one short', () => {
    expect(paginate(numbers(25), { page: 2, size: 10 })).toEqual({
      pagination: { total_items: 25, page_number: 2, page_size: 10, total_pages: 3 },
      data: [11, 12, 13, 14, 15, 16, 17, 18, 19, 20],
    });
    expect(paginate(numbers(25), { page: 3, size: 10 }).data).toEqual([21, 22, 23, 24, 25]);
  });

  it('answers an empty page past the last one, with the true totals', () => {
    expect(paginate(numbers(25), { page: 4, size: 10 })).toEqual({
      pagination: { total_items: 25, page_number: 4, page_size: 10, total_pages: 3 },
      data: [],
    });
    expect(paginate([], {})).toEqual({
      pagination: { total_items: 0, page_number: 1, page_size: 20, total_pages: 0 },
      data: [],
    });
  });

  it('treats explicit undefined like absent', () => {
    expect(paginate(numbers(3), { page: undefined, size: undefined }).pagination).toMatchObject({
      page_number: 1,
      page_size: 20,
    });
  });
});

describe('filterItems', () => {
  const items = [
    { id: 'a1', name: 'Payments API' },
    { id: 'b2', name: 'payments-worker' },
    { id: 'c3', name: 'Reports' },
    { id: 'd4' },
  ];

  it('returns everything without filters', () => {
    expect(filterItems(items, {})).toEqual(items);
    expect(filterItems(items, { id: [], name: '' })).toEqual(items);
  });

  it('keeps the items whose id is listed, in their own order', () => {
    expect(filterItems(items, { id: ['c3', 'a1', 'zz'] }).map((item) => item.id)).toEqual(['a1', 'c3']);
    expect(filterItems(items, { id: ['zz'] })).toEqual([]);
  });

  it('matches names by wildcard, case-insensitively, and skips items without a name', () => {
    expect(filterItems(items, { name: 'payments*' }).map((item) => item.id)).toEqual(['a1', 'b2']);
    expect(filterItems(items, { name: '*API' }).map((item) => item.id)).toEqual(['a1']);
    expect(filterItems(items, { name: 'reports' }).map((item) => item.id)).toEqual(['c3']);
    expect(filterItems(items, { name: '*' }).map((item) => item.id)).toEqual(['a1', 'b2', 'c3']);
  });

  it('applies the id and name filters together', () => {
    expect(filterItems(items, { id: ['b2', 'c3'], name: 'pay*' }).map((item) => item.id)).toEqual(['b2']);
  });
});

describe('wildcardMatcher', () => {
  it('matches the whole value, `*` standing for any run of characters', () => {
    const matches = wildcardMatcher('pay*api');
    expect(matches('payapi')).toBe(true);
    expect(matches('payments api')).toBe(true);
    expect(matches('my payments api')).toBe(false);
    expect(matches('payments api v2')).toBe(false);
    expect(wildcardMatcher('*mid*')('in the middle')).toBe(true);
    expect(wildcardMatcher('exact')('exactly')).toBe(false);
  });

  it('ignores case', () => {
    expect(wildcardMatcher('PAY*')('payments')).toBe(true);
    expect(wildcardMatcher('pay*')('PAYMENTS')).toBe(true);
  });

  it.each([
    ['a.c', 'a.c', 'abc'],
    ['a+', 'a+', 'aa'],
    ['(x|y)', '(x|y)', 'x'],
    ['[ab]', '[ab]', 'a'],
    ['a?', 'a?', 'a'],
    ['^$', '^$', ''],
    ['v{2}', 'v{2}', 'vv'],
    ['back\\slash', 'back\\slash', 'backslash'],
  ])('takes %j literally', (pattern, literal, regexMatch) => {
    const matches = wildcardMatcher(pattern);
    expect(matches(literal)).toBe(true);
    expect(matches(regexMatch)).toBe(false);
  });

  it('keeps metacharacters literal next to wildcards', () => {
    const matches = wildcardMatcher('v1.*');
    expect(matches('v1.2')).toBe(true);
    expect(matches('v12')).toBe(false);
  });
});
