/**
 * What each collection's records must hold to be served: the fields the emulator reads without
 * looking first. A record read from disk without them is reported and kept aside (see Collection).
 */
import { isRecord } from '../../lib/is-record.js';

type Kind = 'string' | 'string|null' | 'array' | 'object' | 'object|null' | 'sealed';

const FIELDS: Record<string, Record<string, Kind>> = {
  tenants: { name: 'string' },
  applications: { name: 'string', type: 'string', permissions: 'array', key_hash: 'string' },
  tokens: { type: 'string', containers: 'array', metadata: 'object', expires_at: 'string|null', secret: 'sealed' },
  transactions: { status: 'string', expires_at: 'string', staged: 'array' },
  reactors: { name: 'string', code: 'string' },
  proxies: { name: 'string', key_hash: 'string', key_sealed: 'sealed', destination_url: 'string' },
  'reactor-results': { reactor_id: 'string', status: 'string' },
};

/**
 * Fields of which a record must hold one: the current form, or the form an earlier svc wrote,
 * brought to the current one at start (configuration sealed, a list of attempts made a delivery).
 */
const EITHER: Record<string, [string, Kind][]> = {
  reactors: [
    ['configuration_sealed', 'sealed'],
    ['configuration', 'object'],
  ],
  proxies: [
    ['configuration_sealed', 'sealed'],
    ['configuration', 'object|null'],
  ],
  'reactor-results': [
    ['delivery', 'object'],
    ['deliveries', 'array'],
  ],
};

/** The check of a collection's records: why one cannot be served, or undefined. */
export function recordCheck(collection: string): ((record: Record<string, unknown>) => string | undefined) | undefined {
  const fields = FIELDS[collection];
  if (!fields) return undefined;
  const either = EITHER[collection];
  return (record) => {
    for (const [field, kind] of Object.entries(fields)) {
      if (!fits(record[field], kind)) return `has no valid "${field}" (${describe(kind)} expected)`;
    }
    if (either && !either.some(([field, kind]) => fits(record[field], kind))) {
      return `has no valid ${either.map(([field, kind]) => `"${field}" (${describe(kind)})`).join(' or ')}`;
    }
    return undefined;
  };
}

function describe(kind: Kind): string {
  return kind === 'sealed' ? 'sealed data' : kind;
}

function fits(value: unknown, kind: Kind): boolean {
  switch (kind) {
    case 'string':
      return typeof value === 'string';
    case 'string|null':
      return value === null || typeof value === 'string';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isRecord(value);
    case 'object|null':
      return value === null || fits(value, 'object');
    case 'sealed': {
      const sealed = value as Record<string, unknown> | null;
      return (
        typeof sealed === 'object' &&
        sealed !== null &&
        ['iv', 'tag', 'ct'].every((part) => typeof sealed[part] === 'string')
      );
    }
  }
}
