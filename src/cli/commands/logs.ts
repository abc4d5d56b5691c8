import type { EmulatorEvent } from '../../api/events.js';
import { STATUS_FILTER_PATTERN } from '../../api/patterns.js';
import type { EventStreamOptions } from '../../client/event-stream.js';
import type { ApiClient } from '../../client/index.js';
import { NameLookupError } from '../../requests/errors.js';
import { resolveProxyId, resolveReactorId } from '../../requests/lookup.js';
import { formatEvent, plainLine } from '../../ui/format-event.js';
import { UsageError, UserError } from '../io/errors.js';
import type { IO } from '../io/process.js';
import { defineCommand } from '../registry.js';

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
  ],
  examples: ['svc logs', 'svc logs --follow --reactor charge', 'svc logs --status 5xx --json | jq .'],
  async handler({ options }, ctx) {
    const status = options.status as string | undefined;
    if (status !== undefined && !STATUS_FILTER_PATTERN.test(status)) {
      throw new UsageError(
        `--status must be a status or a class of them (5xx, 4xx, 404), not ${JSON.stringify(status)}.`,
      );
    }
    const follow = options.follow === true;
    const client = await ctx.client();
    const query = {
      ...(follow && { follow: '1' }),
      ...(status !== undefined && { status }),
      ...(options.reactor !== undefined && { reactor: await codeId(client, 'reactor', options.reactor as string) }),
      ...(options.proxy !== undefined && { proxy: await codeId(client, 'proxy', options.proxy as string) }),
    };
    // JSON lines for a pipe or a file (and with --json), one per event as it arrives; lines for a person otherwise.
    const json = ctx.output.json || ctx.io.stdout.isTTY !== true;
    const print = json
      ? (event: EmulatorEvent) => ctx.io.stdout.write(`${JSON.stringify(event)}\n`)
      : (event: EmulatorEvent) =>
          ctx.io.stdout.write(plainLine(formatEvent(event), ctx.globals.color && colourful(ctx.io)));
    await streamEvents(client, query, ctx.io.signal, print);
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

/** A name resolved to its id (the events of requests carry ids only); one no longer there is passed as given. */
async function codeId(client: ApiClient, kind: 'reactor' | 'proxy', given: string): Promise<string> {
  try {
    return await (kind === 'reactor' ? resolveReactorId(client, given) : resolveProxyId(client, given));
  } catch (error) {
    if (error instanceof NameLookupError && error.ids.length === 0) return given;
    throw error;
  }
}

function colourful(io: IO): boolean {
  return io.stdout.isTTY === true && io.env.TERM !== 'dumb';
}
