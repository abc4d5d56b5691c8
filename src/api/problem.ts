/**
 * RFC 9457 problem details: the one error format of the API (DESIGN.md section 2).
 * Shared by the emulator, which produces them, and the client, which reads them.
 */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  /** Field-level validation messages, keyed by the field's path (`rules[0].priority`). */
  errors?: Record<string, string[]>;
  trace_id?: string;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

const TITLES: Record<number, [slug: string, title: string]> = {
  400: ['bad-request', 'Bad request'],
  401: ['unauthenticated', 'Unauthenticated'],
  402: ['payment-required', 'Invalid payment method'],
  403: ['forbidden', 'Forbidden'],
  404: ['not-found', 'Not found'],
  405: ['method-not-allowed', 'Method not allowed'],
  408: ['timeout', 'Request timeout'],
  409: ['conflict', 'Conflict'],
  413: ['payload-too-large', 'Payload too large'],
  414: ['uri-too-long', 'URI too long'],
  415: ['unsupported-media-type', 'Unsupported media type'],
  422: ['unprocessable', 'Unprocessable entity'],
  429: ['rate-limited', 'Too many requests'],
  431: ['headers-too-large', 'Request headers too large'],
  500: ['internal', 'Internal server error'],
  502: ['bad-gateway', 'Bad gateway'],
  503: ['unavailable', 'Service unavailable'],
  508: ['loop-detected', 'Loop detected'],
};

/** The default `type` and `title` for a status; `type` is a stable URN programs can switch on. */
export function problemDefaults(status: number): { type: string; title: string } {
  const [slug, title] = TITLES[status] ?? [String(status), `HTTP ${status}`];
  return { type: `urn:svc:problem:${slug}`, title };
}

/** Narrows an unknown JSON body to a Problem when it has the required shape. */
export function isProblem(value: unknown): value is Problem {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.title === 'string' && typeof v.status === 'number';
}
