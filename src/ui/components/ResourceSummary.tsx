import { Box, Text } from 'ink';
import { safeText } from '../../lib/terminal-text.js';
import type { ServeResource } from '../serve-types.js';

const GROUPS: [ServeResource['kind'], string][] = [
  ['application', 'applications'],
  ['reactor', 'reactors'],
  ['proxy', 'proxies'],
];

export interface ResourceSummaryProps {
  resources: ServeResource[];
  /** Dim the label (false with --no-color, NO_COLOR or FORCE_COLOR=0); true unless said. */
  color?: boolean | undefined;
}

/**
 * What svc.yaml put on the emulator, one line per kind (truncated to the terminal's width, so that
 * the live part of the screen stays a few lines high however many resources there are).
 */
export function ResourceSummary({ resources, color = true }: ResourceSummaryProps) {
  const groups = GROUPS.map(
    // Names are svc.yaml's (or a server's): shown safe for the terminal.
    ([kind, label]) => [label, resources.filter((r) => r.kind === kind).map((r) => safeText(r.name))] as const,
  );
  const shown = groups.filter(([, names]) => names.length > 0);
  if (shown.length === 0) return null;
  return (
    <Box flexDirection="column">
      {shown.map(([label, names], i) => (
        <Box key={label}>
          <Box width={12} flexShrink={0}>
            <Text dimColor={color}>{i === 0 ? 'resources' : ''}</Text>
          </Box>
          <Box width={14} flexShrink={0}>
            <Text>{label}</Text>
          </Box>
          <Text wrap="truncate-end">{names.join(', ')}</Text>
        </Box>
      ))}
    </Box>
  );
}
