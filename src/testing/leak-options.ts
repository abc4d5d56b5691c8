/**
 * svc/testing's leak guard option: a mode (`'fail'`, the default here), or `{ mode, allowCards,
 * allowHosts }` (declared test cards; hosts a call's code may send its plaintext to, as a payment
 * provider's mock), made into the emulator's options. `leakGuardAllow` (cards) still works.
 */
export type LeakGuardMode = 'warn' | 'fail' | 'off';

export interface LeakGuardSetting {
  /** `fail` by default here. */
  mode?: LeakGuardMode;
  /** Declared test card numbers the card scan leaves alone. */
  allowCards?: string[];
  /** Hosts a call's code may send its plaintext to: `api.example.com`, or `*.example.com`. */
  allowHosts?: string[];
}

export function leakGuardOptions(options: {
  leakGuard?: LeakGuardMode | LeakGuardSetting | undefined;
  leakGuardAllow?: string[] | undefined;
}): { leakGuard: LeakGuardMode; leakGuardAllow?: string[]; leakGuardAllowHosts?: string[] } {
  const setting =
    typeof options.leakGuard === 'object' && options.leakGuard !== null
      ? options.leakGuard
      : { mode: options.leakGuard };
  const cards = [...(options.leakGuardAllow ?? []), ...(setting.allowCards ?? [])];
  return {
    // A mode the emulator does not know is refused by it, in its words.
    leakGuard: setting.mode ?? 'fail',
    ...((options.leakGuardAllow !== undefined || setting.allowCards !== undefined) && { leakGuardAllow: cards }),
    ...(setting.allowHosts !== undefined && { leakGuardAllowHosts: setting.allowHosts }),
  };
}
