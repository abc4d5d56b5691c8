/** The question a destructive command asks, and the `--yes` that answers it ahead. */
import type { Context } from '../context.js';
import { safeLines } from '../../lib/terminal-text.js';
import { isLoopback, targetLine } from '../target/describe.js';
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
    throw new UsageError(`${capitalize(action)} needs --yes: there is no terminal to confirm on.`);
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

/**
 * Says where a change goes, before it is made: `target https://api.example.com (profile "prod")` on
 * stderr, for a person at a terminal. Not into a pipe, where a failure stays the one line it is, and
 * not with --json, whose output stays one document.
 */
export async function announceTarget(ctx: Context): Promise<void> {
  if (ctx.output.json || ctx.io.stderr.isTTY !== true) return;
  ctx.output.note(targetLine(await ctx.target(), ctx.io.cwd));
}

/**
 * The first step of a command that changes a target's configuration (create, update, patch): says the
 * target; one off this machine is asked about on a terminal unless `--yes`, and without a terminal the
 * command is refused naming `--yes`. Loopback (the emulator) is never asked about. False when declined.
 * `action` reads `creating reactor "charge"`.
 */
export async function confirmWrite(ctx: Context, yes: boolean | undefined, action: string): Promise<boolean> {
  const target = await ctx.target();
  const ask = !yes && !isLoopback(target.baseUrl);
  const where = targetLine(target, ctx.io.cwd).replace(/^target /, '');
  if (ask && !canPrompt(ctx.io)) {
    throw new UsageError(
      `${capitalize(action)} on ${where} needs --yes: it is not this machine and there is no terminal to confirm on.`,
    );
  }
  await announceTarget(ctx);
  return !ask || confirm(ctx, `${capitalize(action)} on ${where}?`);
}

function capitalize(text: string): string {
  return `${text[0]?.toUpperCase() ?? ''}${text.slice(1)}`;
}

/** The exit code of a command the user declined: 1, as nothing asked for was done. */
export const DECLINED = 1;
