import path from 'node:path';
import { QUOTA_KINDS } from '../../api/quotas.js';
import type { EmulatorError, EmulatorEvent, EmulatorReady, TenantKeys } from '../../emulator/index.js';
import { safeText } from '../../lib/terminal-text.js';
import { formatEvent, formatNote, paintTone, plainLine, type Tone } from '../../ui/format-event.js';
import { createLogGate, droppedText } from '../../ui/log-gate.js';
import type { IO } from '../io/process.js';

export type LogFormat = 'pretty' | 'json';

/** Event field names are few and fixed: each is converted once (a line per request is the hot path). */
const snakeNames = new Map<string, string>();
function snakeCase(name: string): string {
  let snake = snakeNames.get(name);
  if (snake === undefined)
    snakeNames.set(name, (snake = name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)));
  return snake;
}

export interface ServeLog {
  started(ready: EmulatorReady, dataFile: string | undefined): void;
  event(event: EmulatorEvent): void;
  stopping(signal: string): void;
  stopped(): void;
  /**
   * Writes the events held back for the first lines, and every later one as it comes: for a start
   * that failed (it has no first lines). `started` does it after its lines.
   */
  release(): void;
  /** Writes what is gathered now (lines are otherwise written once per turn of the event loop). */
  flush(): void;
}

type Lines = Omit<ServeLog, 'release'>;

/**
 * How `svc serve` reports: one JSON object per line (for machines, and whenever stdout is not a
 * terminal; the first is always `{"time":...,"event":"listening",...}`, every one has an ISO
 * `time`), or short human lines. No line carries a secret: the keys and the webhook signing secret
 * are in the 0600 credentials file; only the banner on a terminal shows them, once, when the first
 * start generates them.
 */
export function createServeLog(format: LogFormat, io: IO, color: boolean): ServeLog {
  // Lines are gathered and written once per turn of the event loop: under load that is one write
  // for many requests instead of one each (stdout to a file or a pipe writes synchronously).
  let buffered = '';
  const flush = () => {
    if (buffered === '') return;
    const text = buffered;
    buffered = '';
    io.stdout.write(text);
  };
  const out = (line: string) => {
    if (buffered === '') setImmediate(flush);
    buffered += `${line}\n`;
  };
  const backlog = () => (io.stdout as { writableLength?: number }).writableLength ?? 0;
  const log =
    format === 'json'
      ? jsonLines(out, flush)
      : prettyLines(out, flush, { color, terminal: io.stdout.isTTY === true, cwd: io.cwd, backlog });
  // Events of the start (warnings about the store or its keys) are held until the first lines are
  // out: the first line is always the one that says where the emulator listens.
  let held: EmulatorEvent[] | undefined = [];
  const release = () => {
    const events = held ?? [];
    held = undefined;
    for (const event of events) log.event(event);
  };
  return {
    ...log,
    started(ready, dataFile) {
      log.started(ready, dataFile);
      release();
    },
    event(event) {
      if (held) held.push(event);
      else log.event(event);
    },
    release,
  };
}

/** One JSON object per line. */
function jsonLines(out: (line: string) => void, flush: () => void): Lines {
  /** A line of the log's own, stamped like the emulator's events. */
  const json = (value: Record<string, unknown>) => out(JSON.stringify({ time: new Date().toISOString(), ...value }));
  return {
    started({ url, tier, bootstrap, credentialsFile }, dataFile) {
      json({ event: 'listening', url });
      const { tenantId, created, generated } = bootstrap;
      const kinds = generatedKinds(generated);
      json({
        event: 'ready',
        tier,
        data: dataFile ?? null,
        credentials_file: credentialsFile ?? null,
        tenant_id: tenantId,
        created,
        // Which keys this start made (they are in credentials_file), never the keys themselves: CI keeps its logs.
        generated_keys: kinds,
      });
      if (kinds.length > 0 && credentialsFile === undefined)
        json({ event: 'warning', message: keysShownNowhere(false) });
    },
    event(event) {
      // The line of every request is written as text: the hot path, with fields of known types.
      if (event.type === 'request') {
        const { time, method, path, status, ms, traceId, tenantId, detokenized } = event;
        const tenant = tenantId === undefined ? '' : `,"tenant_id":${JSON.stringify(tenantId)}`;
        const tokens = detokenized === undefined ? '' : `,"detokenized":${detokenized}`;
        return out(
          `{"time":"${time}","event":"request","method":${JSON.stringify(method)},"path":${JSON.stringify(path)},"status":${status},"ms":${ms},"trace_id":${JSON.stringify(traceId)}${tenant}${tokens}}`,
        );
      }
      // One flat object per line, snake_case like the API: {"time":...,"event":"invocation","request_id":...}
      const line: Record<string, unknown> = { time: event.time, event: event.type };
      for (const [key, value] of Object.entries(event))
        if (key !== 'type' && key !== 'time') line[snakeCase(key)] = value ?? null;
      if (event.type === 'warning' || event.type === 'error') line.message = eventInFlags(event.message);
      // Stamped by the emulator already: no second time to make and drop (a line per reactor call).
      out(JSON.stringify(line));
    },
    stopping: (signal) => json({ event: 'stopping', signal }),
    stopped: () => {
      json({ event: 'stopped' });
      flush();
    },
    flush,
  };
}

/** Bytes stdout may be behind on (an asynchronous pipe) before pretty lines are dropped rather than queued. */
const MAX_BEHIND_BYTES = 1 << 20;

interface PrettyOptions {
  /** Paint with ANSI colours. */
  color: boolean;
  /** stdout is a terminal: the banner may show the keys a first start made. */
  terminal: boolean;
  cwd: string;
  /** The bytes stdout has not written yet. */
  backlog: () => number;
}

/**
 * Short human lines, a time first, painted when `color`. The banner shows the keys and the webhook
 * signing secret a first start made once, and only on a terminal (`--log-format pretty` into a
 * file is a log like any other). Events are shown at most LINES_PER_WINDOW a second (ui/log-gate.ts):
 * a flood of console lines or requests is dropped with a count rather than written to a terminal
 * that cannot keep up (or queued without bound); the JSON log keeps every line.
 */
function prettyLines(out: (line: string) => void, flush: () => void, options: PrettyOptions): Lines {
  const { color, terminal, cwd } = options;
  const paint = (tone: Tone, text: string) => paintTone(text, tone, color);
  const gate = createLogGate<EmulatorEvent>(
    {
      line(event) {
        // The wording is the dashboard's and `svc logs`' (ui/format-event.ts); an option the emulator's
        // warning names is said as the flag that sets it.
        const worded =
          event.type === 'error' || event.type === 'warning'
            ? { ...event, message: eventInFlags(event.message) }
            : event;
        out(plainLine(formatEvent(worded), color).trimEnd());
      },
      dropped(count) {
        const text = droppedText(count, '; --log-format json keeps every line');
        out(plainLine(formatNote({ level: 'warn', text }), color).trimEnd());
      },
    },
    { behind: () => options.backlog() > MAX_BEHIND_BYTES },
  );
  return {
    started({ url, tier, bootstrap, credentialsFile, webhookSecret }, dataFile) {
      // Paths are the user's: shown safe for a terminal, as every chosen text is (lib/terminal-text.ts).
      const where = dataFile ? `data ${safeText(dataFile)}` : 'in memory';
      out(
        `${paint('ok', '●')} svc emulator listening on ${paint('strong', url)}  ${paint('muted', `(${tier} tier, ${where})`)}`,
      );
      const { created, generated, tenantId } = bootstrap;
      if (created) out(`  Created tenant ${tenantId} with a management and a private Application.`);
      if (generatedKinds(generated).length > 0) {
        if (terminal) {
          const saved = credentialsFile ? ` (saved to ${safeText(credentialsFile)})` : '';
          out(`  Their keys, shown this once${saved}:`);
          if (generated.managementKey) out(`    management  ${generated.managementKey}`);
          if (generated.privateKey) out(`    private     ${generated.privateKey}`);
        } else if (credentialsFile) {
          out(`  Their keys are saved to ${safeText(credentialsFile)} (not shown: stdout is not a terminal).`);
        } else {
          out(`  ${keysShownNowhere(true)}`);
        }
      }
      if (created && terminal) out(`  Webhook signing secret (SVC-SIGNATURE), shown this once: ${webhookSecret}`);
      else out('  Webhook signing secret (SVC-SIGNATURE): `svc webhooks secret` prints it.');
      for (const line of tryLines({ url, bootstrap, credentialsFile }, cwd, terminal)) out(paint('muted', line));
    },
    event: (event) => gate.offer(event),
    stopping: (signal) => {
      gate.report();
      out(`Stopping (${signal})…`);
    },
    stopped: () => {
      gate.report();
      out('Stopped; the store is flushed.');
      flush();
    },
    flush,
  };
}

/** The kinds of key a start generated (`management`, `private`). */
function generatedKinds(generated: TenantKeys): string[] {
  return [...(generated.managementKey ? ['management'] : []), ...(generated.privateKey ? ['private'] : [])];
}

/** Keys generated in memory, where no credentials file keeps them, on a log that shows no secret. */
function keysShownNowhere(pretty: boolean): string {
  const where = pretty ? 'stdout is not a terminal' : 'JSON log lines carry no secret';
  return (
    `The keys this start generated are saved nowhere (in memory) and not shown (${where}): ` +
    'give your own with --management-key and --private-key (or SVC_MANAGEMENT_KEY and SVC_PRIVATE_KEY).'
  );
}

/** How `svc serve` sets each option of createEmulator that the emulator's errors may name. */
const FLAG_OF: Readonly<Record<string, string>> = {
  port: '--port',
  host: '--host',
  inspect: '--inspect',
  'inspect.port': '--inspect',
  data: '--data',
  inMemory: '--in-memory',
  managementKey: '--management-key',
  privateKey: '--private-key',
  tier: '--tier',
  transactionTtlMs: '--transaction-ttl',
  masterKey: 'SVC_MASTER_KEY',
  'record.dir': '--record',
  'replay.dir': '--replay',
  'replay.onMiss': '--on-miss',
  leakGuard: '--leak-guard',
  leakGuardAllow: '--leak-guard-allow',
  leakGuardAllowHosts: '--leak-guard-allow-host',
  ...Object.fromEntries(QUOTA_KINDS.map((kind) => [`quotas.${kind}`, `--quota ${kind}`])),
};

/**
 * An EmulatorError as `svc serve` says it: each option it names as the flag or variable that sets it
 * (`--port`), through the error's own words (EmulatorError.worded), no text rewritten. The emulator is
 * a library and knows no flags of the CLI's.
 */
export function inFlags(error: EmulatorError): string {
  return error.worded((option) => FLAG_OF[option] ?? `options.${option}`);
}

/**
 * An event's message is text (as on the wire, for `svc logs`), not words of a namer: the options it
 * names (a lost key's warning: `options.managementKey`) are replaced where they appear as written,
 * `options.<name>` for each option of FLAG_OF, and nothing else of the text is read.
 */
function eventInFlags(message: string): string {
  if (!message.includes('options.')) return message;
  return Object.entries(FLAG_OF).reduce((text, [option, flag]) => text.split(`options.${option}`).join(flag), message);
}
/**
 * What to try next, offering only what works: the CLI run in this folder finds the emulator through
 * `.svc/credentials.json` (here or in a folder above), which is not written in memory, and not here
 * with --data elsewhere. Then the URL and keys go by env; a key that was given, not generated, is
 * not repeated, and off a terminal none is printed (a log file is no place for keys).
 */
function tryLines(
  emulator: Pick<EmulatorReady, 'url' | 'bootstrap' | 'credentialsFile'>,
  cwd: string,
  terminal: boolean,
): string[] {
  const file = emulator.credentialsFile;
  // The folder whose `.svc/` holds the credentials: the CLI finds them from there and below.
  const dir =
    file !== undefined && path.basename(path.dirname(file)) === '.svc' ? path.dirname(path.dirname(file)) : undefined;
  if (dir !== undefined && (cwd === dir || cwd.startsWith(`${dir}${path.sep}`))) {
    return ['  Try: svc applications list        Stop: Ctrl-C'];
  }
  const { keys, generated } = emulator.bootstrap;
  const key = (made: string | undefined, known: string | undefined, kind: string) => {
    if (made !== undefined) return terminal ? made : `<the ${kind} key>`;
    return known === undefined ? undefined : `<the ${kind} key you gave>`;
  };
  const management = key(generated.managementKey, keys.managementKey, 'management');
  const api = key(generated.privateKey, keys.privateKey, 'private');
  const why = file === undefined ? 'nothing is written in memory' : `the CLI run here does not find ${safeText(file)}`;
  const env = [`SVC_BASE_URL=${emulator.url}`];
  if (management) env.push(`SVC_MANAGEMENT_KEY=${management}`);
  if (api) env.push(`SVC_API_KEY=${api}`);
  return [
    `  Try, from another shell (${why}):`,
    `    export ${env.join(' ')}`,
    '    svc applications list',
    '  Stop: Ctrl-C',
  ];
}
