import { renderToString } from 'ink';
import { Fields } from './components/Fields.js';
import { Table } from './components/Table.js';

/** Renders a table for a terminal `columns` wide (imperative helper over the ink component). */
export function renderTable(headers: string[], rows: string[][], columns = 100): string {
  return renderToString(<Table headers={headers} rows={rows} columns={columns} />, { columns });
}

export function renderFields(pairs: [string, string][], columns = 100): string {
  return renderToString(<Fields pairs={pairs} />, { columns });
}
