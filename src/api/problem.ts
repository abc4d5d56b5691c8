/**
 * RFC 9457 problem details: the one error format of the API (DESIGN.md section 2).
 * Shared by the emulator, which produces them, and the client, which reads them.
 */
import type { Explanation } from './explanation.js';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  /** Field-level validation messages, keyed by the field's path (`rules[0].priority`). */
  errors?: Record<string, string[]>;
  trace_id?: string;
  /** Code that does not load (a 422 of type user-code): the server's name for the file, and where in it. */
  location?: ProblemLocation;
  /** A 401, 403 or detokenization 400: why (issue 30; never a token's value). */
  explanation?: Explanation;
}

/** Where in a code file a load problem is: the line and column when known (1-based). */
export interface ProblemLocation {
  /** The server's name for the file: `charge.js` for reactor charge, `stripe-request-transform.js`. */
  file: string;
  line?: number;
  column?: number;
}

/**
 * What went wrong, as a stable URN that programs switch on (never on a title, which is prose).
 * Most follow the status; `validation` (a 400 with field errors), `user-code` (the reactor's or
 * transform's code threw, did not load, or answered what cannot be sent) and `tier-required` (a
 * 403 that no permission would lift) tell apart what one status holds.
 */
export const PROBLEM_TYPES = {
  badRequest: 'urn:svc:problem:bad-request',
  validation: 'urn:svc:problem:validation',
  unauthenticated: 'urn:svc:problem:unauthenticated',
  paymentRequired: 'urn:svc:problem:payment-required',
  forbidden: 'urn:svc:problem:forbidden',
  tierRequired: 'urn:svc:problem:tier-required',
  notFound: 'urn:svc:problem:not-found',
  methodNotAllowed: 'urn:svc:problem:method-not-allowed',
  timeout: 'urn:svc:problem:timeout',
  conflict: 'urn:svc:problem:conflict',
  payloadTooLarge: 'urn:svc:problem:payload-too-large',
  uriTooLong: 'urn:svc:problem:uri-too-long',
  unsupportedMediaType: 'urn:svc:problem:unsupported-media-type',
  expectationFailed: 'urn:svc:problem:expectation-failed',
  unprocessable: 'urn:svc:problem:unprocessable',
  rateLimited: 'urn:svc:problem:rate-limited',
  headersTooLarge: 'urn:svc:problem:headers-too-large',
  userCode: 'urn:svc:problem:user-code',
  /** A reactor ran, but its Application may not tokenize what its result's `tokenize` block holds. */
  tokenizeRefused: 'urn:svc:problem:tokenize-refused',
  internal: 'urn:svc:problem:internal',
  badGateway: 'urn:svc:problem:bad-gateway',
  unavailable: 'urn:svc:problem:unavailable',
  loopDetected: 'urn:svc:problem:loop-detected',
  /** svc/testing: a request to an origin a test mocks that none of its intercepts matches (a 502). */
  destinationNotMocked: 'urn:svc:problem:destination-not-mocked',
  /** Replay (`svc serve --replay`, svc/testing's replay): a request no cassette answers (a 502). */
  replayMiss: 'urn:svc:problem:replay-miss',
  /**
   * The leak guard in fail mode: a call's answer (or its code's request) held plaintext it detokenized,
   * or a card number; a 500, as the call's code (or its destination) misbehaved, not its caller.
   */
  leak: 'urn:svc:problem:leak',
  /** A write that would keep more than a storage quota allows (a 507; README "Quotas"). */
  quotaExceeded: 'urn:svc:problem:quota-exceeded',
} as const;
export type ProblemType = (typeof PROBLEM_TYPES)[keyof typeof PROBLEM_TYPES];

const DEFAULTS: Record<number, [type: ProblemType, title: string]> = {
  400: [PROBLEM_TYPES.badRequest, 'Bad request'],
  401: [PROBLEM_TYPES.unauthenticated, 'Unauthenticated'],
  402: [PROBLEM_TYPES.paymentRequired, 'Invalid payment method'],
  403: [PROBLEM_TYPES.forbidden, 'Forbidden'],
  404: [PROBLEM_TYPES.notFound, 'Not found'],
  405: [PROBLEM_TYPES.methodNotAllowed, 'Method not allowed'],
  408: [PROBLEM_TYPES.timeout, 'Request timeout'],
  409: [PROBLEM_TYPES.conflict, 'Conflict'],
  413: [PROBLEM_TYPES.payloadTooLarge, 'Payload too large'],
  414: [PROBLEM_TYPES.uriTooLong, 'URI too long'],
  415: [PROBLEM_TYPES.unsupportedMediaType, 'Unsupported media type'],
  417: [PROBLEM_TYPES.expectationFailed, 'Expectation failed'],
  422: [PROBLEM_TYPES.unprocessable, 'Unprocessable entity'],
  429: [PROBLEM_TYPES.rateLimited, 'Too many requests'],
  431: [PROBLEM_TYPES.headersTooLarge, 'Request headers too large'],
  500: [PROBLEM_TYPES.internal, 'Internal server error'],
  502: [PROBLEM_TYPES.badGateway, 'Bad gateway'],
  503: [PROBLEM_TYPES.unavailable, 'Service unavailable'],
  507: [PROBLEM_TYPES.quotaExceeded, 'Insufficient storage'],
  508: [PROBLEM_TYPES.loopDetected, 'Loop detected'],
};

/** The default `type` and `title` for a status (a status without one gets `urn:svc:problem:<status>`). */
export function problemDefaults(status: number): { type: string; title: string } {
  const [type, title] = DEFAULTS[status] ?? [`urn:svc:problem:${status}`, `HTTP ${status}`];
  return { type, title };
}

/** Narrows an unknown JSON body to a Problem when it has the required shape. */
export function isProblem(value: unknown): value is Problem {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.title === 'string' && typeof v.status === 'number';
}

/**
 * The problem an error answer carries: `body` itself when it is one, else one made from the
 * status, with the start of the answer's text as its detail (a proxy or server that is not svc).
 */
export function problemFromAnswer(status: number, body: unknown, text: string): Problem {
  // RFC 9457: a problem without a type is `about:blank` (nothing more than its status).
  if (isProblem(body)) return typeof body.type === 'string' ? body : { ...body, type: 'about:blank' };
  const detail = text.slice(0, 200);
  return { ...problemDefaults(status), status, ...(detail !== '' && { detail }) };
}
