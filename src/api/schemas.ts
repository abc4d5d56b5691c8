/**
 * JSON Schemas of request bodies and queries, shared by the emulator (validation through ajv) and
 * anything that wants to check a body before sending it; and of the asynchronous result, for
 * anything that wants to check what it got. Structural rules live here; rules that
 * span fields (permissions allowed for a type, rule containers) live in the services.
 */
import { DEFAULT_PAGE_SIZE, MAX_NAME_LENGTH, MAX_PAGE, MAX_PAGE_SIZE } from './limits.js';
import { GIVEN_KEY_PATTERN, HTTP_URL_PATTERN, TOKEN_ID_PATTERN } from './patterns.js';
import { APPLICATION_TYPES, RULE_TRANSFORMS } from './permissions.js';

export const uuid = { type: 'string', format: 'uuid' } as const;
const name = { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH } as const;
const permissions = { type: 'array', items: { type: 'string', minLength: 1 }, maxItems: 100 } as const;

export const accessRuleSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['priority', 'transform', 'permissions'],
  properties: {
    description: { type: 'string', maxLength: 1000 },
    priority: { type: 'integer', minimum: 1 },
    container: { type: 'string', minLength: 1, maxLength: 500 },
    conditions: {
      type: 'array',
      maxItems: 100,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['attribute', 'operator', 'value'],
        properties: {
          attribute: { enum: ['id', 'container'] },
          operator: { enum: ['starts_with', 'equals'] },
          value: { type: 'string' },
        },
      },
    },
    transform: { enum: RULE_TRANSFORMS },
    permissions: { ...permissions, minItems: 1 },
  },
} as const;

const rules = { type: 'array', items: accessRuleSchema, maxItems: 100 } as const;

export const createApplicationSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type'],
  properties: {
    name,
    type: { enum: APPLICATION_TYPES },
    permissions,
    rules,
    expires_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

export const updateApplicationSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name, permissions: { ...permissions, minItems: 1 }, rules },
} as const;

export const idParamsSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: uuid },
} as const;

/** /_emulator/tenants/{tenant_id} and its forks. */
export const tenantParamsSchema = {
  type: 'object',
  required: ['tenant_id'],
  properties: { tenant_id: uuid },
} as const;

/** GET /reactors/{id}/results/{request_id}. */
export const resultParamsSchema = {
  type: 'object',
  required: ['id', 'request_id'],
  properties: { id: uuid, request_id: uuid },
} as const;

export const listQuerySchema = {
  type: 'object',
  properties: {
    page: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 },
    size: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
    id: { type: 'array', items: uuid, maxItems: 100 },
    name: { type: 'string', maxLength: MAX_NAME_LENGTH },
  },
} as const;

export const createTokenSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'data'],
  properties: {
    id: { type: 'string', pattern: TOKEN_ID_PATTERN },
    type: { enum: ['token', 'card', 'bank'] },
    data: { not: { type: 'null' } },
    containers: { type: 'array', minItems: 1, maxItems: 10, items: { type: 'string', minLength: 1, maxLength: 500 } },
    metadata: { type: 'object', maxProperties: 50, additionalProperties: { type: 'string', maxLength: 1000 } },
    mask: { not: { type: 'null' } },
    expires_at: { type: ['string', 'null'], format: 'date-time' },
    // Taken as the platform takes them, though svc computes no fingerprint, deduplicates nothing and
    // has no search to index for (docs/fidelity.md).
    fingerprint_expression: { type: ['string', 'null'], maxLength: 1000 },
    deduplicate_token: { type: ['boolean', 'null'] },
    search_indexes: { type: ['array', 'null'], maxItems: 20, items: { type: 'string', maxLength: 1000 } },
  },
} as const;

export const tokenIdParamsSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: TOKEN_ID_PATTERN } },
} as const;

export const tokenListQuerySchema = {
  type: 'object',
  properties: {
    ...listQuerySchema.properties,
    id: { type: 'array', items: { type: 'string', pattern: TOKEN_ID_PATTERN }, maxItems: 100 },
    container: { type: 'string', maxLength: 500 },
    type: { enum: ['token', 'card', 'bank'] },
  },
} as const;

const configuration = {
  type: 'object',
  maxProperties: 200,
  additionalProperties: { type: 'string', maxLength: 10_000 },
} as const;

const applicationRef = {
  anyOf: [
    { type: 'null' },
    { type: 'object', additionalProperties: false, required: ['id'], properties: { id: uuid } },
  ],
} as const;

/** POST and PUT /reactors (PUT replaces; PATCH results are checked against it too). */
export const reactorSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'code', 'configuration'],
  properties: {
    name,
    code: { type: 'string', minLength: 1 },
    configuration,
    application: applicationRef,
  },
} as const;

export const invokeReactorSchema = {
  anyOf: [
    { type: 'null' },
    {
      type: 'object',
      additionalProperties: false,
      properties: {
        args: { type: ['object', 'null'] },
        callback_url: { type: ['string', 'null'], format: 'uri', pattern: HTTP_URL_PATTERN },
        timeout_ms: { type: ['integer', 'null'], minimum: 10_000, maximum: 210_000 },
      },
    },
  ],
} as const;

const problem = {
  type: 'object',
  required: ['type', 'title', 'status'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
  },
} as const;

/** What GET /reactors/{id}/results/{request_id} answers (ReactorResult), for clients that check it. */
export const reactorResultSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'reactor_id', 'status', 'started_at', 'delivery'],
  properties: {
    id: uuid,
    reactor_id: uuid,
    status: { enum: ['pending', 'completed', 'failed'] },
    raw: {},
    tokens: {},
    error: problem,
    started_at: { type: 'string', format: 'date-time' },
    completed_at: { type: 'string', format: 'date-time' },
    delivery: {
      type: 'object',
      additionalProperties: false,
      required: ['status', 'attempts', 'last_status', 'event_id'],
      properties: {
        status: { enum: ['pending', 'delivered', 'failed'] },
        attempts: { type: 'integer', minimum: 0 },
        last_status: { type: ['integer', 'null'] },
        last_error: { type: 'string' },
        event_id: uuid,
      },
    },
  },
} as const;

const transform = {
  anyOf: [
    { type: 'null' },
    {
      type: 'object',
      additionalProperties: false,
      required: ['code'],
      properties: { code: { type: 'string', minLength: 1 } },
    },
  ],
} as const;

/** POST and PUT /proxies (PUT replaces; PATCH results are checked against it too). */
export const proxySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'destination_url'],
  properties: {
    name,
    destination_url: { type: 'string', format: 'uri', pattern: HTTP_URL_PATTERN, maxLength: 2000 },
    request_transform: transform,
    response_transform: transform,
    application: applicationRef,
    configuration: { anyOf: [{ type: 'null' }, configuration] },
    require_auth: { type: 'boolean' },
  },
} as const;

const givenKey = { type: 'string', pattern: GIVEN_KEY_PATTERN.source } as const;

/** POST /_emulator/tenants (the emulator's admin route): an optional name and keys. */
export const createTenantSchema = {
  anyOf: [
    { type: 'null' },
    {
      type: 'object',
      additionalProperties: false,
      properties: { name, management_key: givenKey, private_key: givenKey },
    },
  ],
} as const;

/** POST /_emulator/tenants/{tenant_id}/forks (the emulator's admin route): an optional name for the fork. */
export const forkTenantSchema = {
  anyOf: [{ type: 'null' }, { type: 'object', additionalProperties: false, properties: { name } }],
} as const;

/**
 * GET /_emulator/events (the emulator's admin route): each filter once, as a string of a bounded
 * length (a repeated parameter is an array, refused rather than matching nothing). The status
 * filter's form is checked by the route, which says what it takes.
 */
export const eventsQuerySchema = {
  type: 'object',
  properties: {
    follow: { enum: ['', '1', 'true', '0', 'false'] },
    reactor: { type: 'string', maxLength: MAX_NAME_LENGTH },
    proxy: { type: 'string', maxLength: MAX_NAME_LENGTH },
    status: { type: 'string' },
    request: { type: 'string', maxLength: 128 },
    /** Events at or after this ISO 8601 time. */
    since: { type: 'string', minLength: 1, maxLength: 64 },
    /** The last N of the recent events (the ones followed after them all come). */
    tail: { type: 'integer', minimum: 0, maximum: 100_000 },
    /** A plain substring, case-insensitive, of any text of the event (path, name, console line, error). */
    grep: { type: 'string', minLength: 1, maxLength: 1024 },
  },
} as const;
