/**
 * The named schemas of the OpenAPI document: every schema the routes and answers share, by the
 * identity of its object (the one the server validates with, or answer-schemas.ts's), so that the
 * document says `$ref` where the code reuses an object; and the problem types as a schema.
 */
import * as answers from '../../../api/answer-schemas.js';
import { PROBLEM_TYPES, problemDefaults } from '../../../api/problem.js';
import * as requests from '../../../api/schemas.js';

/** Each shared schema object and its name in `components.schemas`. */
const NAMED: ReadonlyArray<[name: string, schema: object]> = [
  ['Application', answers.applicationAnswerSchema],
  ['Pagination', answers.paginationSchema],
  ['Token', answers.tokenAnswerSchema],
  ['Transaction', answers.transactionAnswerSchema],
  ['Reactor', answers.reactorAnswerSchema],
  ['Proxy', answers.proxyAnswerSchema],
  ['ReactorResponse', answers.reactorResponseSchema],
  ['InvocationAccepted', answers.invocationAcceptedSchema],
  ['ReactorResult', answers.reactorResultSchema],
  ['CreatedTenant', answers.createdTenantSchema],
  ['WebhookSecret', answers.webhookSecretSchema],
  ['Health', answers.healthSchema],
  ['Explanation', answers.explanationSchema],
  ['StoredExplanation', answers.storedExplanationSchema],
  ['ExplainAnswer', answers.explainAnswerSchema],
  ['Problem', answers.problemSchema],
  ['ProxyError', answers.proxyErrorSchema],
  ['AccessRule', requests.accessRuleSchema],
  ['CreateApplication', requests.createApplicationSchema],
  ['UpdateApplication', requests.updateApplicationSchema],
  ['CreateToken', requests.createTokenSchema],
  ['ReactorBody', requests.reactorSchema],
  ['InvokeReactor', requests.invokeReactorSchema],
  ['ProxyBody', requests.proxySchema],
  ['CreateTenant', requests.createTenantSchema],
];

/** What each problem type means beyond its status's title. */
const TYPE_MEANINGS: Partial<Record<keyof typeof PROBLEM_TYPES, string>> = {
  validation: 'A 400 with field errors (`errors`).',
  tierRequired: 'A 403 that no permission would lift: the feature needs another tier.',
  userCode:
    "The reactor's or transform's code threw, did not load (422, with `location`) or answered what cannot be sent.",
  tokenizeRefused: "A reactor ran, but its Application may not tokenize what its result's `tokenize` block holds.",
  destinationNotMocked: 'svc/testing: a request to an origin a test mocks that none of its intercepts matches (502).',
  replayMiss:
    'Replay from cassettes: a request no recorded exchange answers (502; `method`, `origin`, `path`, `cassette`).',
};

/** `type` of a problem: one of the URNs programs switch on, or `urn:svc:problem:<status>` for a status without one. */
function problemTypeSchema(): object {
  const known = Object.entries(PROBLEM_TYPES).map(([key, urn]) => {
    const status = Object.keys(STATUS_TITLES).find((code) => problemDefaults(Number(code)).type === urn);
    const meaning = TYPE_MEANINGS[key as keyof typeof PROBLEM_TYPES];
    const said = status === undefined ? '' : `${status} ${STATUS_TITLES[status]}.`;
    return { const: urn, description: [said, meaning].filter(Boolean).join(' ') || key };
  });
  return {
    description: 'A stable URN that programs switch on (never on `title`, which is prose).',
    anyOf: [
      ...known,
      {
        type: 'string',
        pattern: '^urn:svc:problem:[1-5][0-9]{2}$',
        description: 'A status without a type of its own.',
      },
    ],
  };
}

const STATUS_TITLES: Record<string, string> = Object.fromEntries(
  [400, 401, 402, 403, 404, 405, 408, 409, 413, 414, 415, 417, 422, 429, 431, 500, 502, 503, 507, 508].map((status) => [
    String(status),
    problemDefaults(status).title,
  ]),
);

/**
 * The schema as it goes into the document: each shared object inside it (not itself) replaced by
 * its `$ref`, and the problem's `type` by the ProblemType schema.
 */
export function referenced(schema: object, self?: object): object {
  const name = NAMED.find(([, named]) => named === schema && named !== self)?.[0];
  if (name !== undefined) return { $ref: `#/components/schemas/${name}` };
  if (Array.isArray(schema)) return schema.map((item) => (isObject(item) ? referenced(item) : item));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) out[key] = isObject(value) ? referenced(value) : value;
  if (schema === answers.problemSchema)
    out.properties = { ...(out.properties as object), type: { $ref: '#/components/schemas/ProblemType' } };
  return out;
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

/** `components.schemas`: the shared schemas, the problem types. */
export function componentSchemas(): Record<string, object> {
  const schemas: Record<string, object> = {};
  for (const [name, schema] of NAMED) schemas[name] = referenced(schema, schema);
  schemas.ProblemType = problemTypeSchema();
  return schemas;
}
