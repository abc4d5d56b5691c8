import { Box, Text } from 'ink';

export interface DashboardHelpProps {
  /** Whether `r` has an svc.yaml to re-apply. */
  canReapply: boolean;
  /** Whether `k` has keys to show (none: not offered). */
  canReveal?: boolean | undefined;
  /** Bold keys and a dim border (false with --no-color, NO_COLOR or FORCE_COLOR=0); true unless said. */
  color?: boolean | undefined;
}

/** The keys of the serve dashboard. */
export function DashboardHelp({ canReapply, canReveal = true, color = true }: DashboardHelpProps) {
  const keys: [string, string][] = [
    ['r', canReapply ? 're-apply svc.yaml' : 're-apply svc.yaml (none loaded)'],
    ['c', 'clear the screen and the counters'],
    ...(canReveal ? [['k', 'show the keys (until the next key)'] as [string, string]] : []),
    ['q', 'quit (Ctrl-C too)'],
    ['?', 'close this help'],
  ];
  return (
    <Box flexDirection="column" borderStyle="round" borderDimColor={color} paddingX={1}>
      {keys.map(([key, what]) => (
        <Text key={key}>
          <Text bold={color}>{key}</Text>
          {`  ${what}`}
        </Text>
      ))}
    </Box>
  );
}
