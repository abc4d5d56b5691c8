/**
 * The state of a tenant as `svc state export` writes it and `svc state import` reads it, and as
 * `GET /_emulator/state` and `POST /_emulator/state` carry it: versioned (`svc_state`), one entry
 * per resource, each list sorted (by name, then id; tokens by id), every entry's keys in one order,
 * so that two exports diff line by line. On the wire secrets are in clear (loopback, management
 * key); in a file they are sealed with a passphrase unless `--plaintext` (cli/commands/state/file.ts).
 */
import type { ApplicationType } from './permissions.js';
import type { AccessRule, TokenType } from './types.js';
import { accessRuleSchema, uuid } from './schemas.js';
import { TOKEN_TYPES } from './types.js';
import { APPLICATION_TYPES } from './permissions.js';

/** The version this svc writes. A file of an earlier version is migrated on read (migrateState). */
export const STATE_VERSION = 1;

export interface StateApplication {
  id: string;
  name: string;
  type: ApplicationType;
  permissions: string[];
  rules: AccessRule[];
  expires_at: string | null;
  /** SHA-256 (hex) of the key: the key is never stored, so an import keeps the hash and old keys go on working. */
  key_hash: string;
  created_at: string;
}

export interface StateReactor {
  id: string;
  name: string;
  code: string;
  application_id: string | null;
  configuration: Record<string, string>;
  created_at: string;
}

export interface StateProxy {
  id: string;
  name: string;
  destination_url: string;
  request_transform: { code: string } | null;
  response_transform: { code: string } | null;
  application_id: string | null;
  require_auth: boolean;
  /** The proxy key itself (the API shows it), so that callers holding it go on working. */
  key: string;
  configuration: Record<string, string> | null;
  created_at: string;
}

export interface StateToken {
  id: string;
  type: TokenType;
  containers: string[];
  metadata: Record<string, string>;
  expires_at: string | null;
  created_at: string;
  data: unknown;
  mask?: unknown;
}

export interface StateDocument {
  svc_state: number;
  /** The svc that wrote it, for people (what is read is `svc_state`). */
  svc_version?: string;
  exported_at?: string;
  /** In a file whose secrets are sealed: how (cli/commands/state/file.ts). Never on the wire. */
  sealed?: unknown;
  applications: StateApplication[];
  reactors: StateReactor[];
  proxies: StateProxy[];
  tokens: StateToken[];
}

/** The fields of an entry that are secret: sealed together as its `sealed` field in a file. */
export const SECRET_FIELDS = {
  applications: [],
  reactors: ['configuration'],
  proxies: ['key', 'configuration'],
  tokens: ['data', 'mask'],
} as const satisfies Record<StateKind, readonly string[]>;

export type StateKind = 'applications' | 'reactors' | 'proxies' | 'tokens';
export const STATE_KINDS: readonly StateKind[] = ['applications', 'reactors', 'proxies', 'tokens'];

/** What an import would do (dry run) or did, one line per resource that changes. */
export interface StatePlan {
  dry_run: boolean;
  replace: boolean;
  changes: { kind: StateKind; id: string; name: string | null; action: 'create' | 'update' | 'delete' }[];
  unchanged: number;
  /** What an import leaves although the file does not name it, and why (the key making the call). */
  kept: { kind: StateKind; id: string; name: string | null; reason: string }[];
}

/** A file this svc cannot read: one line saying why. */
export class StateFormatError extends Error {}

/**
 * Brings a state document of any version this svc knows to the current one. Each version's step
 * goes here (`if (version === 1) doc = fromV1(doc)`), so that an export of one svc imports into the
 * next. Version 1 is today's.
 */
export function migrateState(value: unknown): StateDocument {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new StateFormatError('is not a svc state file (no JSON object)');
  const version = (value as { svc_state?: unknown }).svc_state;
  if (version === undefined) throw new StateFormatError('is not a svc state file (no "svc_state" version)');
  if (!Number.isInteger(version) || (version as number) < 1)
    throw new StateFormatError(
      `has an unknown version ${JSON.stringify(version)} (this svc reads 1 to ${STATE_VERSION})`,
    );
  if ((version as number) > STATE_VERSION)
    throw new StateFormatError(
      `is of version ${version}, written by a newer svc (this one reads 1 to ${STATE_VERSION}); upgrade svc`,
    );
  const doc = value as StateDocument;
  for (const kind of STATE_KINDS) {
    if (doc[kind] === undefined) (doc as unknown as Record<string, unknown>)[kind] = [];
    if (!Array.isArray(doc[kind])) throw new StateFormatError(`has "${kind}" that is not a list`);
  }
  return doc;
}

/** Each list in its order: by name then id, tokens by id (what makes two exports diffable). */
export function sortState(doc: StateDocument): StateDocument {
  const byName = <T extends { id: string; name: string }>(list: T[]) =>
    [...list].sort((a, b) => compare(a.name, b.name) || compare(a.id, b.id));
  return {
    ...doc,
    applications: byName(doc.applications),
    reactors: byName(doc.reactors),
    proxies: byName(doc.proxies),
    tokens: [...doc.tokens].sort((a, b) => compare(a.id, b.id)),
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const string = { type: 'string' } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;
const stringMap = { type: 'object', additionalProperties: string } as const;
const code = { type: ['object', 'null'], required: ['code'], properties: { code: string } } as const;
const nullableId = { type: ['string', 'null'] } as const;
const list = (items: object) => ({ type: 'array', items }) as const;

function entry(properties: Record<string, object>, optional: readonly string[] = []) {
  return {
    type: 'object',
    additionalProperties: false,
    required: Object.keys(properties).filter((name) => !optional.includes(name)),
    properties,
  } as const;
}

/** The state document on the wire (secrets in clear): POST /_emulator/state's body, GET's answer. */
export const stateDocumentSchema = {
  type: 'object',
  required: ['svc_state', 'applications', 'reactors', 'proxies', 'tokens'],
  properties: {
    svc_state: { type: 'integer', minimum: 1 },
    svc_version: string,
    exported_at: dateTime,
    applications: list(
      entry({
        id: uuid,
        name: string,
        type: { enum: APPLICATION_TYPES },
        permissions: list(string),
        rules: list(accessRuleSchema),
        expires_at: { type: ['string', 'null'], format: 'date-time' },
        key_hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
        created_at: dateTime,
      }),
    ),
    reactors: list(
      entry({
        id: uuid,
        name: string,
        code: string,
        application_id: nullableId,
        configuration: stringMap,
        created_at: dateTime,
      }),
    ),
    proxies: list(
      entry({
        id: uuid,
        name: string,
        destination_url: string,
        request_transform: code,
        response_transform: code,
        application_id: nullableId,
        require_auth: { type: 'boolean' },
        key: string,
        configuration: { type: ['object', 'null'], additionalProperties: string },
        created_at: dateTime,
      }),
    ),
    tokens: list(
      entry(
        {
          id: { type: 'string', minLength: 1 },
          type: { enum: TOKEN_TYPES },
          containers: list(string),
          metadata: stringMap,
          expires_at: { type: ['string', 'null'], format: 'date-time' },
          created_at: dateTime,
          data: {},
          mask: {},
        },
        ['mask'],
      ),
    ),
  },
} as const;

const change = entry(
  {
    kind: { enum: STATE_KINDS },
    id: string,
    name: { type: ['string', 'null'] },
    action: { enum: ['create', 'update', 'delete'] },
  },
  [],
);

/** POST /_emulator/state's answer and DELETE's: what changed (or would). */
export const statePlanSchema = entry({
  dry_run: { type: 'boolean' },
  replace: { type: 'boolean' },
  changes: list(change),
  unchanged: { type: 'integer', minimum: 0 },
  kept: list(entry({ kind: { enum: STATE_KINDS }, id: string, name: { type: ['string', 'null'] }, reason: string })),
});

export const stateImportQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    dry_run: { enum: ['', '1', 'true', '0', 'false'] },
    replace: { enum: ['', '1', 'true', '0', 'false'] },
  },
} as const;
