/**
 * `svc serve --quota KIND=SIZE` (repeatable, or comma-separated): the emulator's `quotas` option
 * made of it (README "Quotas"), each value checked before anything starts.
 */
import { DEFAULT_QUOTAS, QUOTA_KINDS, type QuotaKind, formatSize, parseSize } from '../../api/quotas.js';
import { UsageError } from '../io/errors.js';

export const QUOTA_FLAGS = [
  {
    flags: '--quota <kind=size>',
    description: `a storage quota, e.g. tokens=1GB (repeatable): ${QUOTA_KINDS.map(
      (kind) => `${kind} (${formatSize(DEFAULT_QUOTAS[kind]).replace(' ', '')})`,
    ).join(', ')}; a tenant's records past one answer 507`,
    repeatable: true,
  },
] as const;

/** The emulator's `quotas` of the flags given (none when none is). */
export function quotaOptions(flags: { quota?: string[] | undefined }): { quotas?: Partial<Record<QuotaKind, number>> } {
  const values = flags.quota?.flatMap((value) => value.split(',')).filter((item) => item.trim() !== '');
  if (values === undefined || values.length === 0) return {};
  const quotas: Partial<Record<QuotaKind, number>> = {};
  for (const value of values) {
    const [kind = '', size = ''] = value.split('=', 2).map((part) => part.trim());
    if (!(QUOTA_KINDS as readonly string[]).includes(kind) || !value.includes('='))
      throw new UsageError(`--quota takes KIND=SIZE with KIND one of ${QUOTA_KINDS.join(', ')}, not "${value}".`);
    const bytes = parseSize(size);
    if (bytes === undefined)
      throw new UsageError(`--quota ${kind} takes a size above 0 such as 512MB or 1GB, not "${size}".`);
    quotas[kind as QuotaKind] = bytes;
  }
  return { quotas };
}
