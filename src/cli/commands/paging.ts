import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../api/limits.js';
import { listQuerySchema } from '../../api/schemas.js';
import type { Pagination } from '../../api/types.js';
import { intOption } from '../io/input.js';
import type { Output } from '../io/output.js';

const { page: PAGE, size: SIZE } = listQuerySchema.properties;

/** `--page` and `--size`, as every list command takes them. */
export const pagingOptions = [
  { flags: '--page <n>', description: 'page number (from 1)' },
  { flags: '--size <n>', description: `page size (1-${MAX_PAGE_SIZE}, default ${DEFAULT_PAGE_SIZE})` },
] as const;

/** `--page` and `--size` as the list query, checked against the API's bounds before any request. */
export function pageQuery(options: { page?: string | undefined; size?: string | undefined }): {
  page?: number;
  size?: number;
} {
  const page = intOption(options.page, '--page', { min: PAGE.minimum, max: PAGE.maximum });
  const size = intOption(options.size, '--size', { min: SIZE.minimum, max: SIZE.maximum });
  return { ...(page !== undefined && { page }), ...(size !== undefined && { size }) };
}

/** Says on stderr that there is more than this page, and how to get it. */
export function notePages(output: Output, pagination: Pagination, plural: string): void {
  const { page_number, total_pages, total_items } = pagination;
  if (total_pages > 1 && page_number <= total_pages) {
    output.note(`Page ${page_number} of ${total_pages} (${total_items} ${plural}); --page for more.`);
  }
}

/** What an empty page says (stderr): `none`, or that --page asked for a page past the last one. */
export function emptyPage(pagination: Pagination, none: string): string {
  const { page_number, total_pages, total_items } = pagination;
  if (total_items > 0 && page_number > total_pages)
    return `Page ${page_number} is past the last page (${total_pages}).`;
  return none;
}
