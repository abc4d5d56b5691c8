import { randomUUID } from 'node:crypto';
import { invokeReactorSchema } from '../../../api/schemas.js';
import type { Problem } from '../../../api/problem.js';
import type { InvokeReactorBody, ReactorResult } from '../../../api/types.js';
import { ApiError } from '../../../client/errors.js';
import type { ApiClient } from '../../../client/index.js';
import { resolveReactorId } from '../../../requests/lookup.js';
import type { Context } from '../../context.js';
import { UsageError, UserError } from '../../io/errors.js';
import { intOption, readInput, parseJson, urlOption } from '../../io/input.js';
import { defineCommand } from '../../registry.js';
import { formatEvent, plainLine } from '../../../ui/format-event.js';
import { streamEvents } from '../logs.js';
import { transactionOption } from '../tokens/shared.js';
import { deliveryLine, printResult } from './result-view.js';
import { waitForResult } from './wait.js';

/** The API's bounds of an asynchronous invocation's time limit, checked before the request. */
const TIMEOUT_MS = invokeReactorSchema.anyOf[1].properties.timeout_ms;

export const reactor = defineCommand({
  name: 'reactor',
  description: 'invoke a reactor with arguments ({{ token_id }} expressions are detokenized)',
  args: [{ name: 'reactor', description: 'reactor id or exact name' }],
  options: [
    { flags: '--args <json>', description: 'the args object: JSON, @file or - (stdin)' },
    { flags: '--callback-url <url>', description: 'invoke asynchronously; the result is POSTed here (Enterprise)' },
    { flags: '--timeout-ms <n>', description: 'asynchronous time limit, 10000-210000 (Enterprise)' },
    {
      flags: '--wait',
      description:
        'with --callback-url: wait for the run and its webhook delivery, print the result; exit 1 if either failed',
    },
    { flags: '--logs', description: "then print this call's console lines on stderr (needs the management key too)" },
    transactionOption,
  ],
  examples: [
    `svc invoke reactor charge --args '{"card":"{{ 5f0e... }}","amount":42}'`,
    'svc invoke reactor charge --args @args.json --json',
  ],
  async handler({ args, options }, ctx) {
    const callbackUrl = urlOption(options.callbackUrl, '--callback-url');
    const timeoutMs = intOption(options.timeoutMs, '--timeout-ms', {
      min: TIMEOUT_MS.minimum,
      max: TIMEOUT_MS.maximum,
    });
    if (timeoutMs !== undefined && callbackUrl === undefined) {
      throw new UsageError('--timeout-ms applies to asynchronous invocations only: add --callback-url.');
    }
    if (options.wait && callbackUrl === undefined) {
      throw new UsageError('--wait applies to asynchronous invocations only: add --callback-url.');
    }
    const text = options.args === undefined ? undefined : await readInput(options.args, ctx.io, '--args');
    const body: InvokeReactorBody = {
      ...(text !== undefined && { args: parseJson(text, '--args') as Record<string, unknown> }),
      ...(callbackUrl !== undefined && { callback_url: callbackUrl }),
      ...(timeoutMs !== undefined && { timeout_ms: timeoutMs }),
    };
    if (body.args !== undefined && (typeof body.args !== 'object' || body.args === null || Array.isArray(body.args))) {
      throw new UsageError('--args must be a JSON object.');
    }
    const client = await ctx.client();
    const id = await resolveReactorId(client, args.reactor);
    // The call's own trace id: its console lines carry it, and --logs asks for those.
    const traceId = options.logs ? randomUUID() : undefined;
    // An asynchronous run's lines carry its result's id instead (`--wait` reads them by that).
    const printLogs = (sayWhyNot = true, request: string | undefined = traceId) =>
      request === undefined || !options.logs ? Promise.resolve() : printConsoleLines(client, request, ctx, sayWhyNot);
    const host = new URL(client.baseUrl).host;
    const answered = ctx.output.busy(`reactor ${args.reactor} (POST ${host})`);
    const response = await client.reactors
      .invoke(id, body, options.transaction, traceId)
      .catch(async (error: unknown) => {
        answered();
        // The call's own error is the one line to show: lines that cannot be had are not another.
        await printLogs(false);
        // The code ran but its result was refused (a tokenize block its Application may not write): the raw
        // result it returned is printed as a success would print it, then the error (in the problem with --json).
        const raw = error instanceof ApiError ? (error.problem as Problem & { raw?: unknown }).raw : undefined;
        if (raw !== undefined && !ctx.output.json) ctx.output.line(JSON.stringify({ raw }, null, 2));
        throw error;
      })
      .finally(answered);
    if (options.wait && 'status' in response && response.status === 'pending') {
      const outcome = await waitForResult(() => client.reactors.result(id, response.id), {
        busy: (label) => ctx.output.busy(label),
        signal: ctx.io.signal,
        name: args.reactor,
      });
      await ctx.output.result(outcome, () => printResult(ctx.output, outcome, { error: false }));
      await printLogs(true, outcome.id);
      return failureOf(outcome, args.reactor, options.callbackUrl);
    }
    await ctx.output.result(response, () => {
      ctx.output.line(JSON.stringify(response, null, 2));
      if ('status' in response && response.status === 'pending') {
        ctx.output.note(
          `Running asynchronously; the result goes to ${options.callbackUrl}. Poll it with: svc reactors result ${args.reactor} ${response.id}`,
        );
      }
    });
    await printLogs();
  },
});

/**
 * How `--wait` ends: a run that failed (the code's 4xx or 5xx, an asynchronous 408) is its error, exit 1,
 * as a synchronous call's would be; a run whose webhook was not delivered is exit 1 too; else nothing.
 */
function failureOf(outcome: ReactorResult, name: string, callbackUrl: string | undefined): void {
  if (outcome.status === 'failed') {
    const problem = outcome.error ?? {
      type: 'about:blank',
      title: 'Reactor failed',
      status: 500,
      detail: `Reactor ${name} failed.`,
    };
    throw new ApiError(problem.status ?? 500, problem);
  }
  if (outcome.delivery.status === 'failed') {
    throw new UserError(
      `Reactor ${name} ran, but its result was not delivered to ${callbackUrl}: ${deliveryLine(outcome.delivery)}. svc logs --request ${outcome.id} shows each attempt.`,
    );
  }
}

/**
 * Prints on stderr the console lines the emulator reported for the call traced as `traceId`. Where
 * they cannot be had (a server that is not the emulator, no management key) one line says why, if
 * `sayWhyNot`; the exit code stays the call's: the call happened, whatever became of its lines.
 */
async function printConsoleLines(client: ApiClient, traceId: string, ctx: Context, sayWhyNot: boolean): Promise<void> {
  try {
    await streamEvents(client, { request: traceId }, ctx.io.signal, (event) => {
      if (event.type === 'console') ctx.output.note(plainLine(formatEvent(event), false).trimEnd());
    });
  } catch (error) {
    if (sayWhyNot)
      ctx.output.note(`Console lines are not available: ${error instanceof Error ? error.message : String(error)}`);
  }
}
