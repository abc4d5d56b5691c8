import { Box, Text } from 'ink';

export interface TableProps {
  headers: string[];
  rows: string[][];
}

/**
 * A borderless table: bold headers, columns as wide as their widest cell; when the terminal is
 * narrower, every column shrinks and truncates rather than any being dropped.
 */
export function Table({ headers, rows }: TableProps) {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)));
  return (
    <Box flexDirection="column">
      <Box>
        {headers.map((header, i) => (
          <Box key={i} width={(widths[i] ?? 0) + 2} flexShrink={1} paddingRight={2}>
            <Text bold wrap="truncate-end">{header}</Text>
          </Box>
        ))}
      </Box>
      {rows.map((row, r) => (
        <Box key={r}>
          {row.map((cell, i) => (
            <Box key={i} width={(widths[i] ?? 0) + 2} flexShrink={1} paddingRight={2}>
              <Text wrap="truncate-end">{cell}</Text>
            </Box>
          ))}
        </Box>
      ))}
    </Box>
  );
}
