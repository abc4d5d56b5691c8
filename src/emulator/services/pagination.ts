/** Filtering and pagination shared by every list endpoint (pure). */
import { DEFAULT_PAGE_SIZE } from '../../api/limits.js';
import { isUuid } from '../../api/patterns.js';
import type { ListQuery, Page } from '../../api/types.js';

/**
 * `*` matches any run of characters; everything else literally, case-insensitively. Matched in
 * linear time (no regular expression: `a*a*a*…b` must not backtrack for seconds).
 */
export function wildcardMatcher(pattern: string): (value: string) => boolean {
  const parts = pattern.toLowerCase().split('*');
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  return (candidate) => {
    const value = candidate.toLowerCase();
    if (parts.length === 1) return value === first;
    if (!value.startsWith(first) || value.length < first.length + last.length || !value.endsWith(last)) return false;
    let at = first.length;
    const end = value.length - last.length;
    for (const middle of parts.slice(1, -1)) {
      const found = value.indexOf(middle, at);
      if (found < 0 || found + middle.length > end) return false;
      at = found + middle.length;
    }
    return true;
  };
}

/** Applies the `id` and `name` filters of a list query. */
export function filterItems<T extends { id: string; name?: string }>(items: T[], query: ListQuery): T[] {
  let result = items;
  if (query.id && query.id.length > 0) {
    // UUIDs match whatever their case; other ids (custom token ids) are case-sensitive.
    const ids = new Set(query.id.map((id) => (isUuid(id) ? id.toLowerCase() : id)));
    result = result.filter((item) => ids.has(item.id));
  }
  if (query.name !== undefined && query.name !== '') {
    const matches = wildcardMatcher(query.name);
    result = result.filter((item) => item.name !== undefined && matches(item.name));
  }
  return result;
}

/** Cuts one page; past the last page `data` is empty. */
export function paginate<T>(items: T[], query: Pick<ListQuery, 'page' | 'size'>): Page<T> {
  const page = query.page ?? 1;
  const size = query.size ?? DEFAULT_PAGE_SIZE;
  const start = (page - 1) * size;
  return {
    pagination: {
      total_items: items.length,
      page_number: page,
      page_size: size,
      total_pages: Math.ceil(items.length / size),
    },
    data: items.slice(start, start + size),
  };
}
