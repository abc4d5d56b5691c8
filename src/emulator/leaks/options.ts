import { DECLARED_CARD_PATTERN, DECLARED_HOST_PATTERN } from '../../api/patterns.js';
import type { LeakMode } from './guard.js';

const MODES: readonly LeakMode[] = ['warn', 'fail', 'off'];

/** The emulator's options of the leak guard. */
export interface LeakGuardOptions {
  leakGuard?: LeakMode | undefined;
  leakGuardAllow?: string[] | undefined;
  leakGuardAllowHosts?: string[] | undefined;
}

/** What is wrong with the leak guard's options, as `[option, reason]`, or undefined. */
export function leakOptionsProblem(options: {
  leakGuard?: unknown;
  leakGuardAllow?: unknown;
  leakGuardAllowHosts?: unknown;
}): { option: 'leakGuard' | 'leakGuardAllow' | 'leakGuardAllowHosts'; reason: string } | undefined {
  const { leakGuard: mode, leakGuardAllow: allow, leakGuardAllowHosts: hosts } = options;
  if (mode !== undefined && !MODES.includes(mode as LeakMode))
    return { option: 'leakGuard', reason: `must be one of ${MODES.join(', ')}.` };
  if (allow !== undefined && !listOf(allow, DECLARED_CARD_PATTERN))
    return { option: 'leakGuardAllow', reason: 'must be card numbers of 13 to 19 digits (spaces or dashes allowed).' };
  if (hosts !== undefined && !listOf(hosts, DECLARED_HOST_PATTERN))
    return {
      option: 'leakGuardAllowHosts',
      reason: 'must be host names (api.example.com, or *.example.com for any host below it), without scheme or path.',
    };
  return undefined;
}

function listOf(value: unknown, pattern: RegExp): boolean {
  return Array.isArray(value) && value.every((item) => typeof item === 'string' && pattern.test(item));
}
