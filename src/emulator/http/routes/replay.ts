import { replayAnswerSchema, replayRequestSchema } from '../../../api/answer-schemas.js';
import { explanationParamsSchema } from '../../../api/explanation.js';
import { HttpError } from '../../errors.js';
import { type Route, json, managementCallerOf } from '../route.js';

/**
 * `svc replay`: a kept call of the caller's tenant (the last 100 per tenant) run again through
 * today's code, its stages compared with what was kept (emulator/replay). Management keys only:
 * it runs the tenant's code and shows what each stage passed (redacted).
 */
export const replayRoutes: readonly Route[] = [
  {
    method: 'POST',
    path: '/_emulator/replay/:trace_id',
    summary:
      "Re-run a kept call of the caller's tenant (by trace id) through today's code and compare it stage by stage (management keys).",
    schema: { params: explanationParamsSchema, body: replayRequestSchema },
    responses: { 200: { description: 'Each stage, kept and re-run.', schema: replayAnswerSchema } },
    problems: [404, 409],
    handler: async (call, { replays }) => {
      const caller = managementCallerOf(call, 'Past calls are replayed for management Applications only.');
      const traceId = call.params.trace_id ?? '';
      if (!replays) throw new HttpError(404, `No kept call with trace id ${traceId}: this server keeps none.`);
      const body = (call.body as { live?: boolean } | null | undefined) ?? {};
      return json(await replays.replay(caller.tenantId, traceId, { live: body.live === true }));
    },
  },
];
