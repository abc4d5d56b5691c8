/**
 * `svc serve --leak-guard warn|fail|off` and `--leak-guard-allow NUMBERS`: the flags, and the
 * emulator's `leakGuard` and `leakGuardAllow` options made of them.
 */
import { UsageError } from '../io/errors.js';

export const LEAK_FLAGS = [
  {
    flags: '--leak-guard <mode>',
    description:
      "a call's detokenized plaintext (or a card number) in its answer or its code's requests: told with a leak event (warn, the default), answered with a leak problem (fail), or not checked (off); logs are redacted unless off",
    choices: ['warn', 'fail', 'off'],
  },
  {
    flags: '--leak-guard-allow <numbers>',
    description: 'declared test card numbers the card scan leaves alone, comma-separated',
  },
] as const;

export type LeakGuardFlag = 'warn' | 'fail' | 'off';

/** The emulator options of the flags given (none when none is). */
export function leakOptions(flags: { leakGuard?: LeakGuardFlag | undefined; leakGuardAllow?: string | undefined }): {
  leakGuard?: LeakGuardFlag;
  leakGuardAllow?: string[];
} {
  const allow = flags.leakGuardAllow
    ?.split(',')
    .map((card) => card.trim())
    .filter((card) => card !== '');
  const bad = allow?.find((card) => !/^\d(?:[ -]?\d){12,18}$/.test(card));
  if (bad !== undefined)
    throw new UsageError(`--leak-guard-allow takes card numbers of 13 to 19 digits, comma-separated, not "${bad}".`);
  return {
    ...(flags.leakGuard !== undefined && { leakGuard: flags.leakGuard }),
    ...(allow !== undefined && { leakGuardAllow: allow }),
  };
}
