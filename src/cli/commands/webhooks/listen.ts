import type { ApiClient } from '../../../client/index.js';
import { safeText } from '../../../lib/terminal-text.js';
import { UsageError, UserError } from '../../io/errors.js';
import { intOption, urlOption } from '../../io/input.js';
import { defineCommand } from '../../registry.js';
import { type Received, isReceiverItself, startReceiver } from './receiver.js';

/** How much of a body a line shows. */
const BODY_VIEW = 100;

export const listen = defineCommand({
  name: 'listen',
  description:
    'a local receiver for asynchronous reactor webhooks: prints each delivery with its signature checked, and forwards it',
  options: [
    { flags: '--port <n>', description: 'the loopback port to listen on (default: a free one)' },
    {
      flags: '--forward-to <url>',
      description: 'forward each delivery (body and SVC-SIGNATURE) there and answer with its status',
    },
  ],
  notes: [
    'It prints the URL to give as callback_url; runs until Ctrl-C.',
    "Signatures are checked with the tenant's webhook secret (svc webhooks secret): a delivery that does not verify",
    'is shown as NOT VERIFIED and answered 401 (when forwarding, forwarded all the same).',
  ],
  examples: [
    'svc webhooks listen',
    'svc webhooks listen --port 4999 --forward-to http://localhost:3000/hooks/svc',
    'svc invoke reactor charge --callback-url http://127.0.0.1:4999/webhooks',
  ],
  async handler({ options }, ctx) {
    const port = intOption(options.port as string | undefined, '--port', { min: 0, max: 65_535 }) ?? 0;
    const forwardTo = urlOption(options.forwardTo as string | undefined, '--forward-to');
    const client = await ctx.client();
    const secret = await client.webhookSecret();
    const names = reactorNames(client);
    const report = (received: Received) => {
      const reactorId = reactorIdOf(received.body);
      void names(reactorId).then((name) => print(ctx, received, name ?? reactorId));
    };
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    try {
      receiver = await startReceiver({ secret, port, forwardTo, report });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new UserError(
        code === 'EADDRINUSE'
          ? `Port ${port} is in use; give another with --port (or none for a free one).`
          : `Cannot listen: ${code ?? (error as Error).message}.`,
      );
    }
    if (forwardTo !== undefined && isReceiverItself(forwardTo, receiver.port)) {
      await receiver.close();
      throw new UsageError(
        `--forward-to is this receiver itself (port ${receiver.port}): each delivery would be forwarded to itself; give your application's URL.`,
      );
    }
    if (ctx.output.json) ctx.io.stdout.write(`${JSON.stringify({ callback_url: receiver.url })}\n`);
    else {
      ctx.output.line(`Ready: use ${receiver.url} as callback_url${forwardTo ? `; forwarding to ${forwardTo}` : ''}.`);
      ctx.output.note('Listening for webhooks; Ctrl-C to stop.');
    }
    await new Promise<void>((resolve) => {
      if (ctx.io.signal.aborted) resolve();
      else ctx.io.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await receiver.close();
    if (!ctx.output.json) ctx.output.note('Stopped listening.');
  },
});

function print(ctx: Parameters<(typeof listen)['handler']>[1], received: Received, reactor: string | undefined): void {
  const body = received.body as { id?: unknown; status?: unknown } | undefined;
  const status = typeof body?.status === 'string' ? body.status : '?';
  if (ctx.output.json) {
    ctx.io.stdout.write(
      `${JSON.stringify({
        event_id: received.eventId ?? null,
        reactor: reactor ?? null,
        status,
        verified: received.verified,
        answered: received.answered,
        ...(received.forward && { forward: received.forward }),
        body: received.body ?? received.text,
      })}\n`,
    );
    return;
  }
  const check = received.verified ? 'verified' : `NOT VERIFIED (${received.refusal})`;
  const forwarded = received.forward ? `  -> ${received.forward.status ?? received.forward.error}` : '';
  const view = bodyView(received);
  ctx.output.line(
    `${new Date().toISOString()}  ${safeText(reactor ?? '?')}  ${safeText(status)}  ${check}${forwarded}  ${safeText(view)}`,
  );
}

/** What a person wants of the body: the result's `raw` (or its error), else the body; cut at BODY_VIEW. */
function bodyView(received: Received): string {
  const body = received.body as { raw?: unknown; error?: unknown } | undefined;
  const shown =
    body?.raw !== undefined
      ? `raw=${JSON.stringify(body.raw)}`
      : body?.error !== undefined
        ? `error=${JSON.stringify(body.error)}`
        : received.text;
  return shown.length > BODY_VIEW ? `${shown.slice(0, BODY_VIEW)}...` : shown;
}

function reactorIdOf(body: unknown): string | undefined {
  const id = (body as { reactor_id?: unknown } | undefined)?.reactor_id;
  return typeof id === 'string' ? id : undefined;
}

/** A reactor's name by id, asked once per id; undefined when it cannot be read (deleted, forged id). */
function reactorNames(client: ApiClient): (id: string | undefined) => Promise<string | undefined> {
  const known = new Map<string, Promise<string | undefined>>();
  return (id) => {
    if (id === undefined || !/^[0-9a-f-]{36}$/i.test(id)) return Promise.resolve(undefined);
    let name = known.get(id);
    if (!name) {
      name = client.reactors.get(id).then(
        (reactor) => reactor.name,
        () => undefined,
      );
      known.set(id, name);
    }
    return name;
  };
}
