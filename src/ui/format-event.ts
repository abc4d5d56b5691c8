import { safeLines, safeText } from '../lib/terminal-text.js';
import type { ServeEvent, ServeNote } from './serve-types.js';

/** What a span means, not how it looks: each renderer picks its own colours for these. */
export type Tone = 'strong' | 'muted' | 'ok' | 'warn' | 'fail' | 'accent';

export interface Span {
  text: string;
  tone?: Tone;
  /** The text is lines on purpose (console output): kept as lines, each made safe, the later ones indented. */
  lines?: true;
}

/**
 * One log line: the clock time, spans joined by spaces, and an optional indented detail (a stack).
 * What formatEvent and formatNote return is safe for a terminal (see `safeEventLine`).
 */
export interface EventLine {
  time: string;
  spans: Span[];
  detail?: string;
}

const statusTone = (status: number): Tone => (status >= 500 ? 'fail' : status >= 400 ? 'warn' : 'ok');
const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
const traced = (traceId: string | undefined): Span[] => (traceId ? [{ text: `[${traceId}]`, tone: 'muted' }] : []);

/** `HH:MM:SS` of an ISO stamp (the emulator stamps in UTC, as the JSON log does). */
function clock(time: string): string {
  return /T(\d\d:\d\d:\d\d)/.exec(time)?.[1] ?? time;
}

/**
 * The number of tokens a request detokenized, when the event says: a count, never the values.
 * Read defensively, as the emulator's request event may not carry it.
 */
export function detokenizedCount(event: ServeEvent): number | undefined {
  if (event.type !== 'request' || !('detokenized' in event)) return undefined;
  const count: unknown = event.detokenized;
  return typeof count === 'number' && Number.isInteger(count) && count > 0 ? count : undefined;
}

/** Why a request was refused (a 401, 403 or detokenization 400), when the event says; read defensively. */
export function refusalReason(event: ServeEvent): string | undefined {
  if (event.type !== 'request' || !('reason' in event)) return undefined;
  const reason: unknown = event.reason;
  return typeof reason === 'string' && reason !== '' ? reason : undefined;
}

/** How the lines after the first of a multi-line text are indented: under the log line, never at column 0. */
const CONTINUATION = '    ';

/**
 * A line made safe for a terminal, every part of it: names, paths, messages, console text, even the
 * numbers and the time (`svc logs` reads events from a server, which may send anything). Control
 * characters and bidirectional overrides are shown escaped (lib/terminal-text.ts); text that is lines
 * on purpose keeps its lines, indented, so that none can pass for a line of the emulator's.
 */
function safeEventLine(line: EventLine): EventLine {
  // String(): an event read from a server may carry anything where a string belongs.
  line.time = safeText(String(line.time));
  for (const span of line.spans) {
    const text = String(span.text);
    span.text = span.lines ? safeLines(text, CONTINUATION) : safeText(text);
  }
  if (line.detail !== undefined) line.detail = safeLines(String(line.detail), CONTINUATION);
  return line;
}

/**
 * The wording of every serve event, in one place: the dashboard renders these spans with ink, and a
 * plain renderer can join them. Every part is made safe for a terminal (`safeEventLine`).
 */
export function formatEvent(event: ServeEvent): EventLine {
  return safeEventLine(wordEvent(event));
}

function wordEvent(event: ServeEvent): EventLine {
  const time = clock(event.time);
  switch (event.type) {
    case 'request': {
      const spans: Span[] = [
        { text: event.method, tone: 'strong' },
        { text: event.path },
        { text: String(event.status), tone: statusTone(event.status) },
        { text: `${event.ms}ms`, tone: 'muted' },
      ];
      const tokens = detokenizedCount(event);
      if (tokens !== undefined) spans.push({ text: `${plural(tokens, 'token')} detokenized`, tone: 'muted' });
      // A refusal's one-line reason, with the trace id `svc explain` takes.
      const reason = refusalReason(event);
      if (reason !== undefined) spans.push(...traced(event.traceId), { text: reason, tone: 'fail' });
      return { time, spans };
    }
    case 'invocation': {
      const spans: Span[] = [
        { text: event.kind },
        { text: event.name, tone: 'strong' },
        { text: String(event.status), tone: statusTone(event.status) },
        { text: `${event.ms}ms`, tone: 'muted' },
      ];
      // A failure shows its trace id: the one the CLI printed with the error.
      if (event.error) spans.push(...traced(event.requestId), { text: event.error, tone: 'fail' });
      // A 4xx is an answer the code chose (BadRequestError): its message says it; a stack is for a failure.
      return { time, spans, ...(event.stack && event.status >= 500 && { detail: event.stack }) };
    }
    case 'console': {
      const loud = event.level === 'error' || event.level === 'warn';
      const text: Span = { text: event.text, lines: true, ...(loud && { tone: 'warn' as const }) };
      return { time, spans: [{ text: `[${event.source}]`, tone: 'accent' }, text] };
    }
    case 'reload': {
      const head: Span[] = [{ text: 'reload' }, { text: event.target, tone: 'strong' }];
      if (event.ok)
        return { time, spans: [...head, { text: 'ok', tone: 'ok' }, { text: `${event.ms}ms`, tone: 'muted' }] };
      const why = `the previous code keeps serving: ${event.error ?? 'unknown error'}`;
      // An svc.yaml that does not load may have several problems, a line each: kept as lines, indented.
      return { time, spans: [...head, { text: 'failed,', tone: 'fail' }, { text: why, lines: true }] };
    }
    case 'error':
      return {
        time,
        spans: [{ text: 'error', tone: 'fail' }, ...traced(event.traceId), { text: event.message, lines: true }],
        ...(event.stack && { detail: event.stack }),
      };
    case 'warning':
      return { time, spans: [{ text: 'warning', tone: 'warn' }, ...traced(event.traceId), { text: event.message }] };
    case 'expired':
      return {
        time,
        spans: [
          { text: 'expired:' },
          {
            text: [
              plural(event.applications, 'Application'),
              plural(event.tokens, 'token'),
              plural(event.transactions, 'transaction'),
              plural(event.results, 'reactor result'),
            ].join(', '),
          },
        ],
      };
    case 'webhook': {
      const outcome = event.status !== undefined ? String(event.status) : event.ok ? 'ok' : (event.error ?? 'failed');
      const spans: Span[] = [
        { text: 'webhook' },
        { text: event.url },
        { text: `attempt ${event.attempt}:` },
        { text: event.delivery === 'failed' ? `${outcome},` : outcome, tone: event.ok ? 'ok' : 'fail' },
      ];
      if (event.delivery === 'failed') spans.push({ text: 'delivery failed', tone: 'fail' });
      return { time, spans };
    }
    case 'leak':
      return { time, spans: leakSpans(event) };
  }
}

/** `leak reactor charge raw: token tok_1 (base64), warned [trace]`: what was found where, never the value. */
function leakSpans(event: Extract<ServeEvent, { type: 'leak' }>): Span[] {
  const what = event.tokenId !== undefined ? `token ${event.tokenId} (${event.form})` : `card ****${event.last4 ?? ''}`;
  const tone: Tone = event.action === 'redacted' ? 'warn' : 'fail';
  return [
    { text: 'leak', tone },
    ...(event.kind !== undefined ? [{ text: event.kind }, { text: event.name ?? '', tone: 'strong' as const }] : []),
    { text: `${event.place}:` },
    { text: what },
    { text: event.action, tone },
    ...traced(event.traceId),
  ];
}

/**
 * A key as the dashboard shows it until asked: the platform's prefix (which kind of key it is) and
 * none of the secret part; a key of another shape (one given with --management-key) not at all.
 */
export function maskKey(key: string): string {
  const prefix = /^key_[a-z]+_[a-z]+_/.exec(key)?.[0] ?? '';
  return `${prefix}${'•'.repeat(8)}`;
}

/** A line of `svc serve`'s own, in the same shape as an event's. */
export function formatNote(note: ServeNote, now: () => Date = () => new Date()): EventLine {
  const tone: Tone | undefined = note.level === 'error' ? 'fail' : note.level === 'warn' ? 'warn' : undefined;
  // A note may quote an error of several lines (a failed re-apply): lines, as console text is.
  const text: Span = { text: note.text, lines: true, ...(tone && { tone }) };
  return safeEventLine({ time: clock(note.time ?? now().toISOString()), spans: [text] });
}

/** The ANSI codes (on, off) of each tone, for a line painted as plain text. */
const TONES: Readonly<Record<Tone, [number, number]>> = {
  strong: [1, 22],
  muted: [2, 22],
  ok: [32, 39],
  warn: [33, 39],
  fail: [31, 39],
  accent: [36, 39],
};

/** `text` in the tone's ANSI colour when `color` (the caller decides, not the process's own stdout). */
export function paintTone(text: string, tone: Tone | undefined, color: boolean): string {
  return color && tone ? `\u001b[${TONES[tone][0]}m${text}\u001b[${TONES[tone][1]}m` : text;
}

/** An event line as plain text, its spans painted with ANSI colours when `color`. */
export function plainLine(line: EventLine, color: boolean): string {
  const paint = (text: string, tone: Tone | undefined) => paintTone(text, tone, color);
  const text = `${paint(line.time, 'muted')} ${line.spans.map((span) => paint(span.text, span.tone)).join(' ')}\n`;
  return line.detail === undefined ? text : `${text}${paint(`    ${line.detail}`, 'muted')}\n`;
}
