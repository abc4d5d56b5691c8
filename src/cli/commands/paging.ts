import type { Pagination } from '../../api/types.js';
import type { Output } from '../output.js';

/** `--page` and `--size`, as every list command takes them. */
export const pagingOptions = [
  { flags: '--page <n>', description: 'page number (from 1)' },
  { flags: '--size <n>', description: 'page size (1-100, default 20)' },
] as const;

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
  if (total_items > 0 && page_number > total_pages) return `Page ${page_number} is past the last page (${total_pages}).`;
  return none;
}
