import { Box, Text } from 'ink';

export interface TableProps {
  headers: string[];
  rows: string[][];
}

/** A borderless table: bold headers, columns as wide as their widest cell. */
export function Table({ headers, rows }: TableProps) {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)));
  return (
    <Box flexDirection="column">
      <Box>
        {headers.map((header, i) => (
          <Box key={i} width={(widths[i] ?? 0) + 2} flexShrink={0}>
            <Text bold>{header}</Text>
          </Box>
        ))}
      </Box>
      {rows.map((row, r) => (
        <Box key={r}>
          {row.map((cell, i) => (
            <Box key={i} width={(widths[i] ?? 0) + 2} flexShrink={i === row.length - 1 ? 1 : 0}>
              <Text wrap="truncate-end">{cell}</Text>
            </Box>
          ))}
        </Box>
      ))}
    </Box>
  );
}
