import { Box, Text } from 'ink';
import { safeText } from '../../lib/terminal-text.js';
import { maskKey } from '../format-event.js';
import type { ServeKey } from '../serve-types.js';

export interface KeyListProps {
  keys: ServeKey[];
  /** Show the values; otherwise each key is masked. */
  reveal: boolean;
  /** Say which key shows them (only when there is a keyboard to press it on). */
  hint: boolean;
  /** Dim the labels (false with --no-color, NO_COLOR or FORCE_COLOR=0); true unless said. */
  color?: boolean | undefined;
}

/** The bootstrap keys by name, masked unless revealed. */
export function KeyList({ keys, reveal, hint, color = true }: KeyListProps) {
  if (keys.length === 0) return null;
  const width = Math.max(...keys.map((key) => key.name.length)) + 2;
  return (
    <Box flexDirection="column">
      {keys.map((key) => (
        <Box key={key.name}>
          <Box width={12} flexShrink={0}>
            <Text dimColor={color}>{key === keys[0] ? 'keys' : ''}</Text>
          </Box>
          <Box width={width} flexShrink={0}>
            <Text>{key.name}</Text>
          </Box>
          {/* A key given with --management-key is any text: shown safe for the terminal. */}
          <Text>{reveal ? safeText(key.value) : maskKey(key.value)}</Text>
          {key === keys[0] && hint && (
            <Text dimColor={color}>{reveal ? '  (any key hides them)' : '  (k shows them)'}</Text>
          )}
        </Box>
      ))}
    </Box>
  );
}
