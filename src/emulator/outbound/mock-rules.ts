/**
 * One destination mock (svc/testing's `t.destinations.intercept(origin).on(method, path)`): what it
 * matches, how it answers, and how problems name it. Pure but for the answer's stream and delay.
 */
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import { HttpError } from '../errors.js';
import type { OutboundResponse } from './types.js';

/** Who sent a request to a destination, as a test names it. */
export interface DestinationSender {
  kind: 'proxy' | 'reactor' | 'transform';
  /** The proxy's or reactor's name ("reactor charge"-style names are the emulator's events'). */
  name: string;
  /** The call it belongs to (`SVC-TRACE-ID`; '' for work of no call). */
  traceId: string;
}

/** A request as its destination (or the mock in its place) received it: detokenized, transformed. */
export interface DestinationRequest {
  /** Upper case: 'POST'. */
  method: string;
  /** The whole URL: 'https://api.example.com/v1/charges?expand=1'. */
  url: string;
  /** The path and query: '/v1/charges?expand=1'. */
  path: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** The body as text ('' when none). */
  body: string;
  /**
   * Only in what `calls()` and `unmatched()` keep: the body was longer than 64 KB, and `body` is its
   * first 64 KB (mocks' matchers and handlers get it whole).
   */
  truncated?: true;
  from: DestinationSender;
}

/** What a mock answers: `body` an object or array is sent as JSON, a string as text, a Buffer as bytes. */
export interface MockAnswer {
  status: number;
  headers?: Record<string, string | string[]>;
  body?: unknown;
}

/** A request's path (and query) as a mock matches it: exactly, by pattern, or by a function of it. */
export type PathMatcher = string | RegExp | ((path: string) => boolean);

/** What else a request must hold for a mock to answer it. */
export interface MockMatch {
  /** Each parameter named has this value (others may be there too); or a function of them. */
  query?: Record<string, string | number | boolean> | ((query: URLSearchParams) => boolean);
  /** Each header named (any case) has this value or matches this pattern. */
  headers?: Record<string, string | RegExp>;
  /** The body: this text, a text matching this pattern, this JSON (an object or array), or a function of the text. */
  body?: string | RegExp | Record<string, unknown> | unknown[] | ((body: string) => boolean);
}

export type MockReply =
  | { answer: MockAnswer }
  | { handler: (request: DestinationRequest) => MockAnswer | Promise<MockAnswer> }
  /** A network failure in the destination's place. */
  | { error: { code: string; message: string } };

export interface MockRule {
  /** 'https://api.example.com' */
  origin: string;
  /** Upper case, or '*' for any. */
  method: string;
  path: PathMatcher;
  match: MockMatch;
  reply: MockReply;
  /** How many more requests it answers (Infinity: persistent). */
  remaining: number;
  used: number;
  delayMs: number;
}

/** Whether `rule` answers `request` (its origin already the rule's). */
export function matches(rule: MockRule, request: DestinationRequest, url: URL): boolean {
  if (rule.remaining <= 0) return false;
  if (rule.method !== '*' && rule.method !== request.method) return false;
  if (!pathMatches(rule.path, url)) return false;
  const { query, headers, body } = rule.match;
  if (query !== undefined && !queryMatches(query, url.searchParams)) return false;
  if (headers !== undefined) {
    for (const [name, expected] of Object.entries(headers)) {
      const value = request.headers[name.toLowerCase()];
      if (value === undefined || !(typeof expected === 'string' ? value === expected : test(expected, value)))
        return false;
    }
  }
  return body === undefined || bodyMatches(body, request.body);
}

function pathMatches(path: PathMatcher, url: URL): boolean {
  const full = `${url.pathname}${url.search}`;
  if (typeof path === 'string') return path.includes('?') ? path === full : path === url.pathname;
  return typeof path === 'function' ? path(full) === true : test(path, full);
}

function queryMatches(query: NonNullable<MockMatch['query']>, params: URLSearchParams): boolean {
  if (typeof query === 'function') return query(params) === true;
  return Object.entries(query).every(([name, value]) => params.get(name) === String(value));
}

function bodyMatches(expected: NonNullable<MockMatch['body']>, body: string): boolean {
  if (typeof expected === 'string') return body === expected;
  if (typeof expected === 'function') return expected(body) === true;
  if (expected instanceof RegExp) return test(expected, body);
  try {
    return isDeepStrictEqual(JSON.parse(body), expected);
  } catch {
    return false;
  }
}

/** A pattern's test, from its start whatever its flags (a /g pattern keeps its place between tests). */
function test(pattern: RegExp, text: string): boolean {
  pattern.lastIndex = 0;
  return pattern.test(text);
}

/** The answer of `rule` to `request`: its static answer, its handler's, or a network failure. */
export async function answerOf(
  rule: MockRule,
  request: DestinationRequest,
  signal: AbortSignal | undefined,
): Promise<OutboundResponse> {
  if (rule.delayMs > 0) await sleep(rule.delayMs, undefined, signal ? { signal } : undefined);
  const { reply } = rule;
  if ('error' in reply) {
    throw new HttpError(502, `The destination ${rule.origin} could not be reached: ${reply.error.message}.`, {
      title: 'Destination unreachable',
      cause: Object.assign(new Error(reply.error.message), { code: reply.error.code }),
    });
  }
  let answer: MockAnswer;
  if ('answer' in reply) answer = reply.answer;
  else {
    try {
      answer = await reply.handler(request);
    } catch (error) {
      throw new HttpError(
        500,
        `The reply function of the mock ${describe(rule)} threw: ${(error as Error)?.message ?? String(error)}`,
        {
          cause: error,
        },
      );
    }
    const problem = answerProblem(answer);
    if (problem !== undefined)
      throw new HttpError(500, `The reply function of the mock ${describe(rule)} returned ${problem}.`);
  }
  return response(answer);
}

/** What is wrong with an answer a mock was given ("status 42: ..."), or undefined. */
export function answerProblem(answer: unknown): string | undefined {
  if (answer === null || typeof answer !== 'object')
    return `${String(answer)}: an answer is { status, headers?, body? }`;
  const { status, headers } = answer as MockAnswer;
  if (!Number.isInteger(status) || status < 200 || status > 599)
    return `status ${String(status)}: a status is an integer from 200 to 599`;
  if (headers !== undefined && (headers === null || typeof headers !== 'object'))
    return 'headers that are not an object of names and values';
  return undefined;
}

function response(answer: MockAnswer): OutboundResponse {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(answer.headers ?? {}))
    headers[name.toLowerCase()] = Array.isArray(value) ? value.map(String) : String(value);
  const { body } = answer;
  let bytes: Buffer;
  let type: string | undefined;
  if (body === undefined || body === null) bytes = Buffer.alloc(0);
  else if (Buffer.isBuffer(body) || body instanceof Uint8Array) {
    bytes = Buffer.from(body);
    type = 'application/octet-stream';
  } else if (typeof body === 'string') {
    bytes = Buffer.from(body);
    type = 'text/plain; charset=utf-8';
  } else {
    bytes = Buffer.from(JSON.stringify(body));
    type = 'application/json';
  }
  if (type !== undefined && headers['content-type'] === undefined) headers['content-type'] = type;
  // As a destination's own: the length of what is sent, whatever the mock said.
  headers['content-length'] = String(bytes.length);
  return { status: answer.status, headers, body: Readable.from([bytes], { objectMode: false }) };
}

/** 'POST /v1/charges', as problems and `pending()` name a mock. */
export function describe(rule: MockRule): string {
  return `${rule.method === '*' ? '*' : rule.method} ${pathText(rule.path)}`;
}

export function pathText(path: PathMatcher): string {
  return typeof path === 'string' ? path : typeof path === 'function' ? '(a function of the path)' : String(path);
}
