import type { EmulatorEvent } from '../../api/events.js';
import { STATUS_FILTER_PATTERN, UUID_PATTERN } from '../../api/patterns.js';
import type { EventStreamOptions } from '../../client/event-stream.js';
import type { ApiClient } from '../../client/index.js';
import { NameLookupError } from '../../requests/errors.js';
import { resolveProxyId, resolveReactorId } from '../../requests/lookup.js';
import { formatEvent, plainLine } from '../../ui/format-event.js';
import { UsageError, UserError } from '../io/errors.js';
import type { IO } from '../io/process.js';
import { defineCommand } from '../registry.js';
import { localMatcher, sinceOption, snakeCased, tailOption } from './logs-query.js';

export const logs = defineCommand({
  name: 'logs',
  description: "the emulator's events for the management key's tenant: requests, runs, console lines, webhooks",
  options: [
    { flags: '-f, --follow', description: 'keep streaming new events until Ctrl-C' },
    {
      flags: '--reactor <name>',
      description: 'only this reactor (name or id): its runs, console lines, webhooks, requests',
    },
    { flags: '--proxy <name>', description: 'only this proxy (name or id): its transforms, console lines, requests' },
    { flags: '--status <status>', description: 'only events with this status or class: 5xx, 4xx, 404...' },
    { flags: '--since <when>', description: 'only events since a duration ago (90s, 10m, 2h, 1d) or an ISO time' },
    { flags: '--tail <n>', description: 'only the last N recent events (then, with --follow, every new one)' },
    { flags: '--grep <text>', description: 'only events containing TEXT (a plain substring, case-insensitive)' },
    {
      flags: '--request <trace-id>',
      description: 'only the events of one call: its request, run, console lines, webhooks',
    },
  ],
  examples: [
    'svc logs',
    'svc logs --follow --reactor charge',
    'svc logs --since 10m --grep timeout --tail 20',
    'svc logs --request 13d18fc8-ae06-4aaf-846a-ed0787e27576',
    'svc logs --status 5xx --json | jq .trace_id',
  ],
  async handler({ options }, ctx) {
    const status = options.status as string | undefined;
    if (status !== undefined && !STATUS_FILTER_PATTERN.test(status)) {
      throw new UsageError(
        `--status must be a status or a class of them (5xx, 4xx, 404), not ${JSON.stringify(status)}.`,
      );
    }
    const since = sinceOption(options.since as string | undefined, Date.now());
    const tail = tailOption(options.tail as string | undefined);
    const grep = options.grep as string | undefined;
    if (grep === '') throw new UsageError('--grep needs some text.');
    const request = options.request as string | undefined;
    const follow = options.follow === true;
    const client = await ctx.client();
    const query = {
      ...(follow && { follow: '1' }),
      ...(status !== undefined && { status }),
      ...(since !== undefined && { since }),
      ...(tail !== undefined && { tail: String(tail) }),
      ...(grep !== undefined && { grep }),
      ...(request !== undefined && { request }),
      ...(options.reactor !== undefined && { reactor: await codeId(client, 'reactor', options.reactor as string) }),
      ...(options.proxy !== undefined && { proxy: await codeId(client, 'proxy', options.proxy as string) }),
    };
    // JSON lines for a pipe or a file (and with --json), one per event as it arrives, snake_case as the API
    // is; lines for a person otherwise.
    const json = ctx.output.json || ctx.io.stdout.isTTY !== true;
    const print = json
      ? (event: EmulatorEvent) => ctx.io.stdout.write(`${JSON.stringify(snakeCased(event))}\n`)
      : (event: EmulatorEvent) =>
          ctx.io.stdout.write(plainLine(formatEvent(event), ctx.globals.color && colourful(ctx.io)));
    const matches = localMatcher({ since, grep, request });
    // A server that ignores `tail` (one from before it) sends all: without --follow the last N are kept here.
    const held: EmulatorEvent[] = [];
    const keep = tail !== undefined && !follow ? (event: EmulatorEvent) => held.push(event) : print;
    await streamEvents(client, query, ctx.io.signal, (event) => {
      if (matches(event)) keep(event);
    });
    if (tail !== undefined && !follow) for (const event of held.slice(held.length - tail)) print(event);
    if (follow && !ctx.io.signal.aborted)
      throw new UserError('The event stream ended unexpectedly (the emulator stopped?).');
  },
});

/**
 * Hands each event to `print` until the stream ends; a stream that breaks off, or a server that
 * sends nothing for `options.silenceMs` (45 s: three of the emulator's heartbeats), is a one-line error.
 * `svc invoke reactor --logs` reads its call's console lines through here too.
 */
export async function streamEvents(
  client: ApiClient,
  query: Record<string, string | undefined>,
  signal: AbortSignal,
  print: (event: EmulatorEvent) => void,
  options: EventStreamOptions = {},
): Promise<void> {
  const { EventStreamEndedError, EventStreamSilentError, EventStreamUnavailableError } = await import(
    '../../client/event-stream.js'
  );
  try {
    for await (const event of client.events(query, signal, options)) print(event);
  } catch (error) {
    if (error instanceof EventStreamEndedError)
      throw new UserError(`${error.message[0]?.toUpperCase()}${error.message.slice(1)}.`);
    // A server that accepts and then says nothing (frozen): named, rather than waited on for ever.
    if (error instanceof EventStreamUnavailableError || error instanceof EventStreamSilentError)
      throw new UserError(error.message);
    throw error;
  }
}

/**
 * A name resolved to its id (the events of requests carry ids only). An id no longer there is passed as
 * given (a deleted reactor's past events); a name that names nothing is an error, not an empty log.
 */
export async function codeId(client: ApiClient, kind: 'reactor' | 'proxy', given: string): Promise<string> {
  try {
    return await (kind === 'reactor' ? resolveReactorId(client, given) : resolveProxyId(client, given));
  } catch (error) {
    if (error instanceof NameLookupError && error.ids.length === 0 && UUID_PATTERN.test(given)) return given;
    throw error;
  }
}

function colourful(io: IO): boolean {
  return io.stdout.isTTY === true && io.env.TERM !== 'dumb';
}
