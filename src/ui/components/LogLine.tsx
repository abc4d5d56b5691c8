import { Box, Text, type TextProps } from 'ink';
import { Fragment } from 'react';
import type { EventLine, Tone } from '../format-event.js';

const TONES: Record<Tone, TextProps> = {
  strong: { bold: true },
  muted: { dimColor: true },
  ok: { color: 'green' },
  warn: { color: 'yellow' },
  fail: { color: 'red' },
  accent: { color: 'cyan' },
};

export interface LogLineProps {
  line: EventLine;
}

/** One line of the serve log: dimmed time, the event's spans, and its detail (a stack) indented below. */
export function LogLine({ line }: LogLineProps) {
  return (
    <Box flexDirection="column">
      <Text>
        <Text dimColor>{line.time}</Text>
        {line.spans.map((span, i) => (
          <Fragment key={i}>
            {' '}
            <Text {...(span.tone ? TONES[span.tone] : {})}>{span.text}</Text>
          </Fragment>
        ))}
      </Text>
      {line.detail !== undefined && <Text dimColor>{`    ${line.detail}`}</Text>}
    </Box>
  );
}
