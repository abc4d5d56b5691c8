import { Box, Text } from 'ink';

export interface FieldsProps {
  pairs: [label: string, value: string][];
}

/** One resource as label/value lines, labels dimmed and aligned. */
export function Fields({ pairs }: FieldsProps) {
  const width = Math.max(...pairs.map(([label]) => label.length)) + 2;
  return (
    <Box flexDirection="column">
      {pairs.map(([label, value], i) => (
        <Box key={i}>
          <Box width={width} flexShrink={0}>
            <Text dimColor>{label}</Text>
          </Box>
          <Text>{value}</Text>
        </Box>
      ))}
    </Box>
  );
}
