/** The question a destructive command asks, and the `--yes` that answers it ahead. */
import type { Context } from '../context.js';
import { safeLines } from '../../lib/terminal-text.js';
import { UsageError } from './errors.js';
import { askYesNo, canPrompt } from './prompt.js';

/** `-y, --yes`, as every destructive command takes it. */
export const yesOption = {
  flags: '-y, --yes',
  description: 'go ahead without asking (needed when there is no terminal to ask on)',
} as const;

/**
 * The first step of a destructive command, before any request: with `--yes` there is nothing to ask;
 * without a terminal it is a usage error naming `--yes`; otherwise the command asks (true) once it
 * knows what to name in the question. `action` reads `deleting reactor "charge"`.
 */
export function mustAsk(ctx: Context, yes: boolean | undefined, action: string): boolean {
  if (yes) return false;
  if (!canPrompt(ctx.io)) {
    throw new UsageError(
      `${action[0]?.toUpperCase()}${action.slice(1)} needs --yes: there is no terminal to confirm on.`,
    );
  }
  return true;
}

/** Asks `question [y/N]` (after a warning, if any); on no, says that nothing changed. */
export async function confirm(ctx: Context, question: string, warnings: string[] = []): Promise<boolean> {
  for (const warning of warnings) ctx.io.stderr.write(`Warning: ${safeLines(warning, '  ')}\n`);
  const yes = await askYesNo(ctx.io, question);
  if (!yes) ctx.output.note('Cancelled; nothing changed.');
  return yes;
}

/** The exit code of a command the user declined: 1, as nothing asked for was done. */
export const DECLINED = 1;
