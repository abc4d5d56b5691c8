/**
 * Storage quotas (README "Quotas"): how many bytes of each kind of record a tenant may make the
 * emulator keep, a tenant's total and the total of all tenants. Shared by the emulator, which
 * enforces them, and the CLI, whose `svc serve --quota KIND=SIZE` sets them.
 */

/** Per tenant: each kind a tenant keeps, and `tenant` (all of them together); `total`: all tenants together. */
export const QUOTA_KINDS = ['tokens', 'results', 'transactions', 'resources', 'tenant', 'total'] as const;
export type QuotaKind = (typeof QUOTA_KINDS)[number];
/** The kinds a record is of (`tenant` and `total` are sums of these). */
export type RecordKind = Exclude<QuotaKind, 'tenant' | 'total'>;

/** Sizes in bytes, or as text (`512MB`, `1GB`). */
export type QuotaSettings = Partial<Record<QuotaKind, number | string>>;
export type QuotaLimits = Record<QuotaKind, number>;

const MB = 1024 * 1024;
const GB = 1024 * MB;

/** Sized for a laptop of 8 GB: all tenants together keep at most 1 GB of records. */
export const DEFAULT_QUOTAS: Readonly<QuotaLimits> = {
  tokens: 256 * MB,
  results: 64 * MB,
  transactions: 64 * MB,
  resources: 32 * MB,
  tenant: 256 * MB,
  total: GB,
};

/** What each kind counts, as the README and a refusal say it. */
export const QUOTA_STORAGE: Readonly<Record<QuotaKind, string>> = {
  tokens: "The tenant's token storage",
  results: "The tenant's storage of asynchronous results",
  transactions: "The tenant's storage of transactions' staged writes",
  resources: "The tenant's storage of Applications, reactors and proxies",
  tenant: "The tenant's storage",
  total: "The emulator's storage (all tenants together)",
};

/** What frees room of a kind. */
export const QUOTA_REMEDY: Readonly<Record<QuotaKind, string>> = {
  tokens: 'Delete tokens',
  results: 'Results go 24 h after their delivery ends',
  transactions: 'Commit or roll back open transactions',
  resources: 'Delete Applications, reactors or proxies',
  tenant: 'Delete tokens or other records',
  total: 'Delete tenants or their tokens',
};

const UNITS: Readonly<Record<string, number>> = {
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: MB,
  mb: MB,
  mib: MB,
  g: GB,
  gb: GB,
  gib: GB,
  t: 1024 * GB,
  tb: 1024 * GB,
  tib: 1024 * GB,
};

/**
 * A size as a person writes it: `512MB`, `1.5 GB`, `64kb`, `1048576` (bytes). Units are binary
 * (1 KB = 1024 bytes). Undefined when it is not one, or not above 0.
 */
export function parseSize(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  if (!match) return undefined;
  const unit = UNITS[(match[2] ?? '').toLowerCase() || 'b'];
  if (unit === undefined) return undefined;
  const bytes = Math.floor(Number(match[1]) * unit);
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : undefined;
}

/** `512 MB`, `1 GB`, `1.5 KB`: a size as a quota's refusal says it (binary units, to a tenth). */
export function formatSize(bytes: number): string {
  for (const [unit, size] of [
    ['GB', GB],
    ['MB', MB],
    ['KB', 1024],
  ] as const) {
    if (bytes >= size) return `${Math.round((bytes / size) * 10) / 10} ${unit}`;
  }
  return `${bytes} B`;
}

/** Why a quota setting cannot be used (naming nothing but the value), or undefined when it can. */
export function quotaProblem(kind: string, value: unknown): string | undefined {
  if (!(QUOTA_KINDS as readonly string[]).includes(kind)) return `is not a quota: one of ${QUOTA_KINDS.join(', ')}.`;
  if (sizeOf(value) === undefined)
    return `must be a size above 0, like 512MB or 1GB (or a number of bytes), not ${JSON.stringify(value)}.`;
  return undefined;
}

/** The limits the settings give, each kind not set at its default; settings are checked first (quotaProblem). */
export function quotaLimits(settings: QuotaSettings = {}): QuotaLimits {
  const limits = { ...DEFAULT_QUOTAS };
  for (const kind of QUOTA_KINDS) {
    const value = settings[kind];
    if (value !== undefined) limits[kind] = sizeOf(value) ?? limits[kind];
  }
  return limits;
}

function sizeOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  return typeof value === 'string' ? parseSize(value) : undefined;
}
