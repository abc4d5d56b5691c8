import { createTwoFilesPatch } from 'diff';
import type { ReplayAnswer } from '../../api/replay.js';
import { ReplayUnavailableError } from '../../client/replay.js';
import { safeLines, safeText } from '../../lib/terminal-text.js';
import type { Context } from '../context.js';
import { UserError } from '../io/errors.js';
import { defineCommand } from '../registry.js';

export const replay = defineCommand({
  name: 'replay',
  description:
    "re-run a past call through today's code and diff it stage by stage; exit 0 same, 1 something differs, 2 an error",
  args: [{ name: 'trace_id', description: 'the trace id of a proxy or reactor call (the dashboard, svc logs)' }],
  options: [
    { flags: '--live', description: "send the destination's request to the network instead of the recorded answer" },
  ],
  notes: [
    'The emulator keeps the last 100 calls of each tenant, redacted (token expressions, masked cards, no',
    'credentials). A re-run writes nothing: req.svc writes are refused and no tokenize block is tokenized.',
  ],
  errorExitCode: 2,
  examples: ['svc replay 4bf92f35-77b3-4da6-a3ce-929d0e0e4736', 'svc replay 4bf92f35-... --live --json'],
  async handler({ args, options }, ctx) {
    const answer = await replayed(ctx, args.trace_id, options.live === true);
    await ctx.output.result(answer, () => {
      ctx.output.painted(formatReplay(answer));
    });
    return answer.same ? 0 : 1;
  },
});

async function replayed(ctx: Context, traceId: string, live: boolean): Promise<ReplayAnswer> {
  try {
    return await (await ctx.client()).replay.rerun(traceId, { live });
  } catch (error) {
    if (error instanceof ReplayUnavailableError) throw new UserError(error.message, { cause: error });
    throw error;
  }
}

/** Each stage on a line, a unified diff under each that differs; every text made safe for a terminal. */
export function formatReplay(answer: ReplayAnswer): string {
  const lines = [
    `${answer.kind} ${safeText(answer.name)} · call ${safeText(answer.trace_id)} of ${answer.time}, re-run as ${answer.replay_trace_id}${answer.live ? ' (live)' : ''}`,
  ];
  for (const stage of answer.stages) {
    lines.push(`${stage.same ? '  same   ' : '  differs'} ${safeText(stage.stage)}`);
    if (stage.same) continue;
    const patch = createTwoFilesPatch('recorded', 'replayed', shown(stage.recorded), shown(stage.replayed), '', '', {
      context: 3,
    });
    // The header (=== and the file names) says nothing the stage line does not.
    const body = patch.split('\n').slice(2).join('\n').trimEnd();
    lines.push(safeLines(body, '      '));
  }
  const differing = answer.stages.filter((stage) => !stage.same).length;
  lines.push(
    differing === 0
      ? 'Nothing differs.'
      : `${differing} of ${answer.stages.length} stage${answer.stages.length === 1 ? '' : 's'} differ${differing === 1 ? 's' : ''}.`,
  );
  return lines.join('\n');
}

function shown(value: unknown): string {
  return value === null ? '(none)\n' : `${JSON.stringify(value, null, 2)}\n`;
}
