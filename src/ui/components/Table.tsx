import { Box, Text } from 'ink';
import { GAP, fitColumns } from '../fit-columns.js';
import { Fields } from './Fields.js';

export interface TableProps {
  headers: string[];
  rows: string[][];
  /** The terminal's width. */
  columns: number;
}

/**
 * A borderless table: bold headers, columns as wide as their widest cell, two spaces apart. When the
 * terminal is narrower, the descriptive columns narrow and wrap (fitColumns); ids, names and types never
 * do. When even that is too wide, each row is shown as a record of label/value lines instead.
 */
export function Table({ headers, rows, columns }: TableProps) {
  const { widths, fits } = fitColumns(headers, rows, columns);
  if (!fits) {
    return (
      <Box flexDirection="column" gap={1}>
        {rows.map((row, r) => (
          <Fields key={r} pairs={headers.map((header, i) => [header.toLowerCase(), row[i] ?? ''])} />
        ))}
      </Box>
    );
  }
  const last = headers.length - 1;
  const line = (cells: string[], bold: boolean) =>
    cells.map((cell, i) => (
      <Box key={i} width={(widths[i] ?? 0) + (i < last ? GAP : 0)} flexShrink={0} paddingRight={i < last ? GAP : 0}>
        <Text bold={bold} wrap="wrap">
          {cell}
        </Text>
      </Box>
    ));
  return (
    <Box flexDirection="column">
      <Box>{line(headers, true)}</Box>
      {rows.map((row, r) => (
        <Box key={r}>{line(row, false)}</Box>
      ))}
    </Box>
  );
}
