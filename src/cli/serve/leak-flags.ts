/**
 * `svc serve --leak-guard warn|fail|off`, `--leak-guard-allow NUMBERS` and `--leak-guard-allow-host
 * HOST`: the flags, and the emulator's `leakGuard`, `leakGuardAllow` and `leakGuardAllowHosts`
 * options made of them.
 */
import { DECLARED_CARD_PATTERN, DECLARED_HOST_PATTERN } from '../../api/patterns.js';
import { UsageError } from '../io/errors.js';

export const LEAK_FLAGS = [
  {
    flags: '--leak-guard <mode>',
    description:
      "a call's detokenized plaintext (or a card number) in its answer or its code's requests: told with a leak event (warn, the default), answered with a leak problem (fail), or not checked (off); logs, events and recordings are redacted in every mode",
    choices: ['warn', 'fail', 'off'],
  },
  {
    flags: '--leak-guard-allow <numbers>',
    description: 'declared test card numbers the card scan leaves alone, comma-separated',
  },
  {
    flags: '--leak-guard-allow-host <host>',
    description:
      "a host a call's code may send its plaintext to (a payment provider): api.example.com or *.example.com; repeatable or comma-separated",
    repeatable: true,
  },
] as const;

export type LeakGuardFlag = 'warn' | 'fail' | 'off';

/** The emulator options of the flags given (none when none is). */
export function leakOptions(flags: {
  leakGuard?: LeakGuardFlag | undefined;
  leakGuardAllow?: string | undefined;
  leakGuardAllowHost?: string[] | undefined;
}): {
  leakGuard?: LeakGuardFlag;
  leakGuardAllow?: string[];
  leakGuardAllowHosts?: string[];
} {
  const allow = commaList(flags.leakGuardAllow);
  const bad = allow?.find((card) => !DECLARED_CARD_PATTERN.test(card));
  if (bad !== undefined)
    throw new UsageError(`--leak-guard-allow takes card numbers of 13 to 19 digits, comma-separated, not "${bad}".`);
  const hosts = flags.leakGuardAllowHost?.flatMap((value) => commaList(value) ?? []);
  const badHost = hosts?.find((host) => !DECLARED_HOST_PATTERN.test(host));
  if (badHost !== undefined)
    throw new UsageError(
      `--leak-guard-allow-host takes a host name (api.example.com, or *.example.com for any host below it), not "${badHost}".`,
    );
  return {
    ...(flags.leakGuard !== undefined && { leakGuard: flags.leakGuard }),
    ...(allow !== undefined && { leakGuardAllow: allow }),
    ...(hosts !== undefined && { leakGuardAllowHosts: hosts }),
  };
}

function commaList(value: string | undefined): string[] | undefined {
  return value
    ?.split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
