/**
 * JSON Schemas (2020-12, the dialect of OpenAPI 3.1) of what the API answers: the wire types of
 * types.ts, problem.ts and explanation.ts as data, for the OpenAPI document (emulator/http/openapi.ts)
 * and anything that checks what it got. Request schemas are in schemas.ts.
 */
import { EXPLANATION_DECISIONS, EXPRESSION_OUTCOMES, RULE_CRITERIA } from './explanation.js';
import { APPLICATION_TYPES, RULE_TRANSFORMS } from './permissions.js';
import { QUOTA_KINDS } from './quotas.js';
import { accessRuleSchema, reactorResultSchema, uuid } from './schemas.js';
import { TOKEN_TYPES } from './types.js';

const string = { type: 'string' } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;
const stringMap = { type: 'object', additionalProperties: string } as const;

/** An object whose every property is listed, and these required. */
function closed(properties: Record<string, object>, required: readonly string[] = Object.keys(properties)) {
  return { type: 'object', additionalProperties: false, required: [...required], properties } as const;
}

export const applicationAnswerSchema = closed(
  {
    id: uuid,
    tenant_id: uuid,
    name: string,
    key: { ...string, description: 'Present only in the answers to create and regenerate.' },
    type: { enum: APPLICATION_TYPES },
    permissions: { type: 'array', items: string },
    rules: { type: 'array', items: accessRuleSchema },
    created_by: string,
    created_at: dateTime,
    modified_by: string,
    modified_at: dateTime,
    expires_at: { type: ['string', 'null'], format: 'date-time' },
  },
  ['id', 'tenant_id', 'name', 'type', 'permissions', 'rules'],
);

export const paginationSchema = closed({
  total_items: { type: 'integer', minimum: 0 },
  page_number: { type: 'integer', minimum: 1 },
  page_size: { type: 'integer', minimum: 1 },
  total_pages: { type: 'integer', minimum: 0 },
});

/** A page of a list: `{ pagination, data }`. */
export function pageSchema(item: object) {
  return closed({ pagination: paginationSchema, data: { type: 'array', items: item } });
}

export const tokenAnswerSchema = closed(
  {
    id: string,
    tenant_id: uuid,
    type: { enum: TOKEN_TYPES },
    data: { description: "Present, masked or absent as the caller's access decides." },
    containers: { type: 'array', items: string },
    metadata: stringMap,
    created_by: string,
    created_at: dateTime,
    expires_at: { type: ['string', 'null'], format: 'date-time' },
  },
  ['id', 'tenant_id', 'type', 'containers', 'metadata', 'created_at', 'expires_at'],
);

export const transactionAnswerSchema = closed({
  id: uuid,
  created_at: dateTime,
  created_by: string,
  expires_at: dateTime,
  status: { enum: ['open', 'committed', 'rolled_back', 'expired'] },
});

export const reactorAnswerSchema = closed(
  {
    id: uuid,
    tenant_id: uuid,
    name: string,
    code: string,
    configuration: stringMap,
    application: { anyOf: [{ type: 'null' }, applicationAnswerSchema] },
    created_by: string,
    created_at: dateTime,
    modified_by: string,
    modified_at: dateTime,
  },
  ['id', 'tenant_id', 'name', 'code', 'configuration', 'application', 'created_at', 'modified_at'],
);

const proxyTransform = { anyOf: [{ type: 'null' }, closed({ code: string })] } as const;

export const proxyAnswerSchema = closed(
  {
    id: uuid,
    tenant_id: uuid,
    name: string,
    key: string,
    destination_url: string,
    request_transform: proxyTransform,
    response_transform: proxyTransform,
    application_id: { anyOf: [{ type: 'null' }, uuid] },
    configuration: { anyOf: [{ type: 'null' }, stringMap] },
    require_auth: { type: 'boolean' },
    created_by: string,
    created_at: dateTime,
    modified_by: string,
    modified_at: dateTime,
  },
  [
    'id',
    'tenant_id',
    'name',
    'key',
    'destination_url',
    'request_transform',
    'response_transform',
    'application_id',
    'configuration',
    'require_auth',
    'created_at',
    'modified_at',
  ],
);

/**
 * What running user code (a reactor, a proxy's transform) may fail with besides any route's
 * problems: the platform error classes' statuses, a load problem (422), a timeout (408), a
 * conflict with a deletion (409), an outbound call that failed (502).
 */
export const USER_CODE_PROBLEMS: readonly number[] = [402, 408, 409, 422, 429, 502];

/** A completed synchronous invocation: the code's `raw` answer and the tokens of its `tokenize` block. */
export const reactorResponseSchema = { type: 'object', properties: { raw: {}, tokens: {} } } as const;

/** 202 of an asynchronous invocation: poll GET /reactors/{id}/results/{id}, or wait for the webhook. */
export const invocationAcceptedSchema = closed({ id: uuid, status: { const: 'pending' } });

export { reactorResultSchema };

export const createdTenantSchema = closed({
  id: uuid,
  name: string,
  created_at: dateTime,
  management_key: string,
  private_key: string,
});

/**
 * POST /_emulator/tenants/{tenant_id}/forks: the fork as `POST /_emulator/tenants` answers a tenant, and
 * every Application, reactor and proxy it copied, each Application and proxy with its new key.
 */
export const forkedTenantSchema = closed({
  id: uuid,
  name: string,
  created_at: dateTime,
  management_key: string,
  private_key: string,
  applications: { type: 'array', items: closed({ id: uuid, name: string, type: string, key: string }) },
  reactors: { type: 'array', items: closed({ id: uuid, name: string }) },
  proxies: { type: 'array', items: closed({ id: uuid, name: string, key: string }) },
});

/** GET /_emulator/tenants: every tenant of the emulator, the bootstrapped one first; no keys. */
export const tenantListSchema = closed({
  data: {
    type: 'array',
    items: closed({ id: uuid, name: string, created_at: dateTime, bootstrap: { type: 'boolean' } }),
  },
});

export const webhookSecretSchema = closed({ secret: string });

const quotaUse = closed({ used: { type: 'integer', minimum: 0 }, quota: { type: 'integer', minimum: 1 } });

/** GET /_emulator/quotas: the bytes the tenant keeps against each quota, and all tenants' against `total`. */
export const quotaUsageSchema = closed(Object.fromEntries(QUOTA_KINDS.map((kind) => [kind, quotaUse])));

/** GET /health: `ok` while the store can write; `unavailable` (503) with the store's words while it cannot. */
export const healthSchema = closed(
  {
    status: { enum: ['ok', 'unavailable'] },
    version: string,
    store: closed({ writable: { const: false }, detail: string }),
  },
  ['status', 'version'],
);

const decidedBy = {
  anyOf: [{ type: 'null' }, closed({ rule: { type: 'integer' } }), closed({ plain_permissions: { const: true } })],
} as const;

const transform = { enum: RULE_TRANSFORMS } as const;
const criterion = { type: ['boolean', 'null'] } as const;

/** Why access was granted or refused (src/api/explanation.ts); never a token's value. */
export const explanationSchema = closed(
  {
    decision: { enum: EXPLANATION_DECISIONS },
    reason: string,
    application: { anyOf: [{ type: 'null' }, closed({ id: string, name: string, type: string })] },
    operation: string,
    permission: closed({
      name: string,
      held_plainly: { type: 'boolean' },
      held_by_rules: { type: 'array', items: { type: 'integer' } },
    }),
    token: closed({ id: string, containers: { type: 'array', items: string } }),
    rules: {
      type: 'array',
      items: closed(
        {
          index: { type: 'integer' },
          priority: { type: 'integer' },
          description: string,
          container: string,
          conditions: { type: 'array' },
          permissions: { type: 'array', items: string },
          transform,
          criteria: closed({ container: criterion, conditions: criterion, permission: { type: 'boolean' } }),
          matched: { type: 'boolean' },
        },
        ['index', 'priority', 'permissions', 'transform', 'criteria', 'matched'],
      ),
    },
    decided_by: decidedBy,
    nearest_miss: closed({ rule: { type: 'integer' }, failed: { enum: RULE_CRITERIA } }),
    transform,
    expressions: {
      type: 'array',
      items: closed(
        {
          expression: string,
          token_id: string,
          container: string,
          decided_by: decidedBy,
          transform,
          outcome: { enum: EXPRESSION_OUTCOMES },
          reason: string,
        },
        ['expression', 'outcome', 'reason'],
      ),
    },
  },
  ['decision', 'reason', 'application'],
);

/** GET /_emulator/explanations/{trace_id}. */
export const storedExplanationSchema = closed({
  trace_id: string,
  method: string,
  path: string,
  status: { type: 'integer' },
  time: dateTime,
  explanation: explanationSchema,
});

/** POST /_emulator/explain. */
export const explainAnswerSchema = closed({
  decision: { enum: EXPLANATION_DECISIONS },
  explanation: explanationSchema,
});

/**
 * RFC 9457 problem details with the API's extensions: field `errors`, a load problem's `location`,
 * the `explanation` of a 401, 403 or detokenization 400, the `trace_id`. Open: a reactor's failure
 * may carry more members (RFC 9457 extensions).
 */
export const problemSchema = {
  type: 'object',
  required: ['type', 'title', 'status'],
  properties: {
    type: { ...string, description: 'A stable URN (urn:svc:problem:...) that programs switch on.' },
    title: string,
    status: { type: 'integer', minimum: 100, maximum: 599 },
    detail: string,
    errors: {
      type: 'object',
      description: "Field-level messages keyed by the field's path (`rules[0].priority`).",
      additionalProperties: { type: 'array', items: string },
    },
    trace_id: string,
    location: closed({ file: string, line: { type: 'integer', minimum: 1 }, column: { type: 'integer', minimum: 1 } }, [
      'file',
    ]),
    explanation: explanationSchema,
    leaks: {
      type: 'array',
      description: 'A leak problem: what the leak guard found (never the value).',
      items: {
        type: 'object',
        required: ['place', 'form'],
        properties: { place: string, form: string, token_id: string, last4: string },
      },
    },
  },
} as const;

/** Spec 4.3: an error of the proxy itself (not the destination's) on /proxy. */
export const proxyErrorSchema = closed({ proxy_error: problemSchema });

/** One webhook delivery of an asynchronous invocation (GET /_emulator/webhooks, POST .../resend). */
export const webhookDeliverySchema = closed(
  {
    id: uuid,
    reactor_id: uuid,
    reactor: { type: ['string', 'null'] },
    callback_url: string,
    event_id: uuid,
    status: { enum: ['pending', 'delivered', 'failed'] },
    attempts: { type: 'integer', minimum: 0 },
    last_status: { type: ['integer', 'null'] },
    last_error: string,
    next_attempt_at: dateTime,
    created_at: dateTime,
    attempt_log: {
      type: 'array',
      items: closed(
        {
          attempt: { type: 'integer', minimum: 1 },
          at: dateTime,
          status: { type: ['integer', 'null'] },
          error: string,
          resend: { const: true },
        },
        ['attempt', 'at', 'status'],
      ),
    },
  },
  [
    'id',
    'reactor_id',
    'reactor',
    'callback_url',
    'event_id',
    'status',
    'attempts',
    'last_status',
    'created_at',
    'attempt_log',
  ],
);

export { stateDocumentSchema, statePlanSchema } from './state.js';

/** The body of POST /_emulator/replay/{trace_id}: `live` sends the destination's request to the network. */
export const replayRequestSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    live: {
      type: 'boolean',
      description: 'Send the requests to the network rather than answer them from the kept call.',
    },
  },
} as const;

/** POST /_emulator/replay/{trace_id}: a kept call run again through today's code, stage by stage. */
export const replayAnswerSchema = closed({
  trace_id: string,
  replay_trace_id: string,
  kind: { enum: ['proxy', 'reactor'] },
  id: string,
  name: string,
  time: dateTime,
  live: { type: 'boolean' },
  same: { type: 'boolean' },
  stages: {
    type: 'array',
    items: closed({
      stage: string,
      same: { type: 'boolean' },
      recorded: { description: 'What the kept call passed there, redacted (null: no such stage).' },
      replayed: { description: 'What the re-run passed there, redacted (null: no such stage).' },
    }),
  },
});
