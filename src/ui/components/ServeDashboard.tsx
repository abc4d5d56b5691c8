import { Box, Text } from 'ink';
import { safeText } from '../../lib/terminal-text.js';
import { type EventLine, maskKey } from '../format-event.js';
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
  /** Leak events seen (the leak guard): a badge when any. */
  leaks?: number;
  lastReload?: EventLine | undefined;
  reapplying: boolean;
  showHelp: boolean;
  /** A keyboard is attached (stdin is a terminal): the keys work and are offered. */
  interactive: boolean;
  canReapply: boolean;
  /** Colours and bold or dim text (false with --no-color, NO_COLOR or FORCE_COLOR=0); true unless said. */
  color?: boolean | undefined;
  /**
   * The URL and keys as an `export` line for another shell: where no credentials file is written (in
   * memory), it is how the CLI run elsewhere finds the emulator. Its keys are masked as the others are.
   */
  exportLine?: boolean | undefined;
}

/** The environment of the CLI for this emulator, by the names of its keys (`management`, `private`). */
const ENV_OF: Readonly<Record<string, string>> = { management: 'SVC_MANAGEMENT_KEY', private: 'SVC_API_KEY' };

/**
 * The live part of `svc serve` on a terminal (URL, keys, resources, counters): a few lines high,
 * redrawn in place. The log is written above it as plain text (ui/dashboard-log.ts), once, and then
 * belongs to the terminal, so its scrollback, search and copy keep working.
 */
export function ServeDashboard(props: ServeDashboardProps) {
  const { requests, failures, lastReload } = props;
  const color = props.color !== false;
  // The reload's own spans, less the word "reload".
  const reload =
    lastReload &&
    `  last reload ${lastReload.time} ${lastReload.spans
      .slice(1)
      .map((s) => s.text)
      .join(' ')}`;
  // `k` is offered only when there are keys to show.
  const keysHint = props.interactive
    ? `? help  r re-apply  c clear  ${props.keys.length > 0 ? 'k keys  ' : ''}q quit`
    : 'Ctrl-C stops (stdin is not a terminal: no keys)';
  const dim = color ? { dimColor: true } : {};
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text>
        <Text {...(color && { color: 'green' })}>●</Text> svc emulator <Text bold={color}>{props.url}</Text>
      </Text>
      <KeyList keys={props.keys} reveal={props.revealKeys} hint={props.interactive} color={color} />
      {props.exportLine && <ExportLine url={props.url} keys={props.keys} reveal={props.revealKeys} dim={color} />}
      <ResourceSummary resources={props.resources} color={color} />
      <Text {...dim} wrap="truncate-end">
        {`${requests} request${requests === 1 ? '' : 's'}, `}
        <Text
          {...(failures > 0 && color && { color: 'red' })}
        >{`${failures} failure${failures === 1 ? '' : 's'}`}</Text>
        {(props.leaks ?? 0) > 0 && (
          <Text
            {...(color && { color: 'red', bold: true })}
          >{`, ${props.leaks} leak${props.leaks === 1 ? '' : 's'}`}</Text>
        )}
        {reload}
      </Text>
      {props.reapplying && <Text {...(color && { color: 'yellow' })}>Re-applying svc.yaml…</Text>}
      {props.showHelp && (
        <DashboardHelp canReapply={props.canReapply} canReveal={props.keys.length > 0} color={color} />
      )}
      <Text {...dim}>{keysHint}</Text>
    </Box>
  );
}

/** `export SVC_BASE_URL=… SVC_MANAGEMENT_KEY=… SVC_API_KEY=…`, its keys masked unless revealed. */
function ExportLine({ url, keys, reveal, dim }: { url: string; keys: ServeKey[]; reveal: boolean; dim: boolean }) {
  const env = [`SVC_BASE_URL=${url}`];
  for (const key of keys) {
    const name = ENV_OF[key.name];
    if (name) env.push(`${name}=${reveal ? safeText(key.value) : maskKey(key.value)}`);
  }
  return (
    <Box>
      <Box width={12} flexShrink={0}>
        <Text dimColor={dim}>shell</Text>
      </Box>
      <Text>{`export ${env.join(' ')}`}</Text>
    </Box>
  );
}
