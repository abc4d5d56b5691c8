import { Box, Text } from 'ink';

export interface DashboardHelpProps {
  /** Whether `r` has an svc.yaml to re-apply. */
  canReapply: boolean;
}

/** The keys of the serve dashboard. */
export function DashboardHelp({ canReapply }: DashboardHelpProps) {
  const keys: [string, string][] = [
    ['r', canReapply ? 're-apply svc.yaml' : 're-apply svc.yaml (none loaded)'],
    ['c', 'clear the screen and the counters'],
    ['k', 'show the keys (until the next key)'],
    ['q', 'quit (Ctrl-C too)'],
    ['?', 'close this help'],
  ];
  return (
    <Box flexDirection="column" borderStyle="round" borderDimColor paddingX={1}>
      {keys.map(([key, what]) => (
        <Text key={key}>
          <Text bold>{key}</Text>
          {`  ${what}`}
        </Text>
      ))}
    </Box>
  );
}
