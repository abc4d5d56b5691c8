/**
 * The platform tiers the emulator can play (DESIGN.md section 2): Enterprise adds transactions,
 * asynchronous reactors and the proxy connection headers.
 */
export const TIERS = ['enterprise', 'standard'] as const;
export type Tier = (typeof TIERS)[number];
export const DEFAULT_TIER: Tier = 'enterprise';

export function isTier(value: unknown): value is Tier {
  return (TIERS as readonly unknown[]).includes(value);
}
