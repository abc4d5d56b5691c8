import type { LeakMode } from './guard.js';

const MODES: readonly LeakMode[] = ['warn', 'fail', 'off'];

/** What is wrong with the leak guard's options, as `[option, reason]`, or undefined. */
export function leakOptionsProblem(
  mode: unknown,
  allow: unknown,
): { option: 'leakGuard' | 'leakGuardAllow'; reason: string } | undefined {
  if (mode !== undefined && !MODES.includes(mode as LeakMode))
    return { option: 'leakGuard', reason: `must be one of ${MODES.join(', ')}.` };
  if (allow === undefined) return undefined;
  const cards = Array.isArray(allow) ? allow : [];
  if (!Array.isArray(allow) || cards.some((card) => typeof card !== 'string' || !/^\d(?:[ -]?\d){12,18}$/.test(card)))
    return { option: 'leakGuardAllow', reason: 'must be card numbers of 13 to 19 digits (spaces or dashes allowed).' };
  return undefined;
}
