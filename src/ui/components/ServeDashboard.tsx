import { Box, Text } from 'ink';
import type { EventLine } from '../format-event.js';
import type { ServeKey, ServeResource } from '../serve-types.js';
import { DashboardHelp } from './DashboardHelp.js';
import { KeyList } from './KeyList.js';
import { ResourceSummary } from './ResourceSummary.js';

export interface ServeDashboardProps {
  url: string;
  keys: ServeKey[];
  revealKeys: boolean;
  resources: ServeResource[];
  requests: number;
  failures: number;
  lastReload?: EventLine | undefined;
  reapplying: boolean;
  showHelp: boolean;
  /** A keyboard is attached (stdin is a terminal): the keys work and are offered. */
  interactive: boolean;
  canReapply: boolean;
}

/**
 * The live part of `svc serve` on a terminal (URL, keys, resources, counters): a few lines high,
 * redrawn in place. The log is written above it as plain text (ui/dashboard-log.ts), once, and then
 * belongs to the terminal, so its scrollback, search and copy keep working.
 */
export function ServeDashboard(props: ServeDashboardProps) {
  const { requests, failures, lastReload } = props;
  // The reload's own spans, less the word "reload".
  const reload =
    lastReload &&
    `  last reload ${lastReload.time} ${lastReload.spans
      .slice(1)
      .map((s) => s.text)
      .join(' ')}`;
  const keysHint = props.interactive
    ? '? help  r re-apply  c clear  k keys  q quit'
    : 'Ctrl-C stops (stdin is not a terminal: no keys)';
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text>
        <Text color="green">●</Text> svc emulator <Text bold>{props.url}</Text>
      </Text>
      <KeyList keys={props.keys} reveal={props.revealKeys} hint={props.interactive} />
      <ResourceSummary resources={props.resources} />
      <Text dimColor wrap="truncate-end">
        {`${requests} request${requests === 1 ? '' : 's'}, `}
        <Text {...(failures > 0 && { color: 'red' })}>{`${failures} failure${failures === 1 ? '' : 's'}`}</Text>
        {reload}
      </Text>
      {props.reapplying && <Text color="yellow">Re-applying svc.yaml…</Text>}
      {props.showHelp && <DashboardHelp canReapply={props.canReapply} />}
      <Text dimColor>{keysHint}</Text>
    </Box>
  );
}
