import type { ExplainRequest } from '../../api/explanation.js';
import { ExplanationsUnavailableError } from '../../client/explanations.js';
import { resolveApplicationId } from '../../requests/lookup.js';
import type { Context } from '../context.js';
import { UsageError, UserError } from '../io/errors.js';
import { defineCommand } from '../registry.js';

export const explain = defineCommand({
  name: 'explain',
  description: 'why a request was refused (by its trace id), or what an Application would be granted',
  args: [{ name: 'trace_id', description: 'the SVC-TRACE-ID of a refused request', optional: true }],
  options: [
    { flags: '--application <name-or-id>', description: 'a hypothetical: the Application asking' },
    { flags: '--token <id>', description: 'a hypothetical: the token asked for' },
    { flags: '--container <path>', description: 'a hypothetical: a token in this container (e.g. /pci/high/)' },
    { flags: '--permission <name>', description: 'a hypothetical: the permission asked for (e.g. token:use)' },
  ],
  notes: [
    'A hypothetical names the Application with --application, or by its key with the global --api-key;',
    "it is evaluated against the target's current Applications and tokens (with the management key).",
  ],
  examples: [
    'svc explain 4bf92f35-77b3-4da6-a3ce-929d0e0e4736',
    'svc explain --application support --container /pci/high/ --permission token:use',
    'svc explain --api-key "$PARTNER_KEY" --token 0b3f0f56-... --permission token:read --json',
  ],
  async handler({ args, options }, ctx) {
    const hypothetical = [options.application, options.token, options.container, options.permission].some(
      (value) => value !== undefined,
    );
    if (args.trace_id !== undefined) {
      if (hypothetical) {
        throw new UsageError(
          'Give a TRACE_ID or a hypothetical (--permission with --application or --api-key), not both.',
        );
      }
      return explainTrace(args.trace_id, ctx);
    }
    if (!hypothetical) {
      throw new UsageError(
        'Give the TRACE_ID of a request, or a hypothetical: --permission with --application or --api-key (and --token or --container).',
      );
    }
    return explainHypothetical(await hypotheticalOf(options, ctx), ctx);
  },
});

async function explainTrace(traceId: string, ctx: Context): Promise<void> {
  const client = await ctx.client();
  const stored = await withUnavailable(() => client.explanations.get(traceId));
  await ctx.output.result(stored, async () => {
    const { formatStoredExplanation } = await import('../../ui/render-explanation.js');
    ctx.output.painted(formatStoredExplanation(stored, { color: painting(ctx) }).trimEnd());
  });
}

async function explainHypothetical(given: ExplainRequest, ctx: Context): Promise<void> {
  const client = await ctx.client();
  const body: ExplainRequest = { ...given };
  if (given.application !== undefined) body.application = await resolveApplicationId(client, given.application);
  const answer = await withUnavailable(() => client.explanations.explain(body));
  await ctx.output.result(answer, async () => {
    const { formatExplanation } = await import('../../ui/render-explanation.js');
    ctx.output.painted(formatExplanation(answer.explanation, { color: painting(ctx) }).trimEnd());
  });
}

/** The hypothetical's body from the flags: exactly one asker, at most one token or container. */
async function hypotheticalOf(
  options: { application?: string; token?: string; container?: string; permission?: string },
  ctx: Context,
): Promise<ExplainRequest> {
  // The global --api-key (not SVC_API_KEY or a profile's): only a key typed here is a question.
  const apiKey = (await ctx.flags()).apiKey;
  if (options.permission === undefined) throw new UsageError('A hypothetical needs --permission (e.g. token:use).');
  if ((options.application === undefined) === (apiKey === undefined)) {
    throw new UsageError('A hypothetical names one Application: --application NAME_OR_ID or --api-key KEY.');
  }
  if (options.token !== undefined && options.container !== undefined) {
    throw new UsageError('Give --token or --container, not both.');
  }
  return {
    permission: options.permission,
    ...(options.application !== undefined && { application: options.application }),
    ...(apiKey !== undefined && options.application === undefined && { api_key: apiKey }),
    ...(options.token !== undefined && { token: options.token }),
    ...(options.container !== undefined && { container: options.container }),
  };
}

/** A server without the explanation routes, said in one line. */
export async function withUnavailable<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ExplanationsUnavailableError) throw new UserError(error.message, { cause: error });
    throw error;
  }
}

/** Colour on a terminal only, as apply paints its plan. */
function painting(ctx: Context): boolean {
  return ctx.output.options.color && ctx.io.stdout.isTTY === true;
}
