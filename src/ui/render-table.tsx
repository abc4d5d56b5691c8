import { renderToString } from 'ink';
import { safeLines, safeText } from '../lib/terminal-text.js';
import { Fields } from './components/Fields.js';
import { Table } from './components/Table.js';

/**
 * Renders a table for a terminal `columns` wide (imperative helper over the ink component). Cells are
 * names and values someone chose: each is made one safe line (lib/terminal-text.ts), so none can draw
 * on the terminal or start a row of its own.
 */
export function renderTable(headers: string[], rows: string[][], columns = 100): string {
  const cells = rows.map((row) => row.map((cell) => safeText(cell)));
  return renderToString(<Table headers={headers.map((h) => safeText(h))} rows={cells} columns={columns} />, {
    columns,
  });
}

/** Label/value pairs; a value may be lines on purpose (rules), each made safe. */
export function renderFields(pairs: [string, string][], columns = 100): string {
  const safe = pairs.map(([label, value]): [string, string] => [safeText(label), safeLines(value)]);
  return renderToString(<Fields pairs={safe} />, { columns });
}
