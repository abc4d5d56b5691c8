/** Columns that identify a row: never narrowed, so an id can always be copied whole from a list. */
const KEEP = new Set(['ID', 'NAME', 'TYPE']);
/** The space between two columns, always kept. */
export const GAP = 2;
/** A narrowed column keeps at least this many characters (or its header's, if longer). */
const MIN_WIDTH = 8;

/**
 * The width of each column of a table for a terminal `columns` wide. Each column starts as wide as its
 * widest cell; when the row is too long, the columns that may narrow (not ID, NAME, TYPE) give up a
 * character at a time, widest first, until the row fits: first those whose text wraps between words
 * (permissions, rules), down to their longest word, then any of them down to a few characters. Their
 * cells then wrap. `fits` is false when even that is too wide: the caller then shows each row as a record
 * (psql's expanded display) rather than cutting an id.
 */
export function fitColumns(headers: string[], rows: string[][], columns: number): { widths: number[]; fits: boolean } {
  const cells = (i: number) => [headers[i] ?? '', ...rows.map((row) => row[i] ?? '')];
  const widths = headers.map((_, i) => Math.max(...cells(i).map((cell) => longest(cell, '\n'))));
  const kept = headers.map((header) => KEEP.has(header));
  const words = headers.map((_, i) =>
    cells(i).some((cell) => /\s/.test(cell.trim()))
      ? Math.max(MIN_WIDTH, ...cells(i).map((cell) => longest(cell, /\s/)))
      : Infinity,
  );
  const least = headers.map((header) => Math.max(MIN_WIDTH, header.length));
  let excess = widths.reduce((sum, width) => sum + width, 0) + GAP * (widths.length - 1) - columns;
  for (const floor of [words, least]) {
    excess = narrow(widths, (i) => (kept[i] ? Infinity : floor[i]!), excess);
  }
  return { widths, fits: excess <= 0 };
}

/** Takes `excess` characters off the widest columns above their floor; returns what could not be taken. */
function narrow(widths: number[], floor: (i: number) => number, excess: number): number {
  while (excess > 0) {
    let widest = -1;
    for (let i = 0; i < widths.length; i++) {
      if (widths[i]! > floor(i) && (widest < 0 || widths[i]! > widths[widest]!)) widest = i;
    }
    if (widest < 0) return excess;
    widths[widest]! -= 1;
    excess -= 1;
  }
  return excess;
}

function longest(text: string, separator: string | RegExp): number {
  return Math.max(...text.split(separator).map((part) => part.length));
}
