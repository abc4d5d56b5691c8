/**
 * Destination mocks per tenant (svc/testing's `t.destinations`): one interceptor on the outbound
 * gateway for every tenant, a tenant's mocks found by the origin's tenant id, so that one test's
 * mocks never answer another's requests. A tenant that is not registered costs a Map lookup and
 * goes to the network as before. For a registered tenant, every request (mocked or not) is
 * recorded as its destination receives it (its body's first 64 KB); a request to an origin that has
 * mocks but none that matches fails with a problem of its own type, and is recorded as unmatched.
 */
import { Readable } from 'node:stream';
import { PROBLEM_TYPES } from '../../api/problem.js';
import { HttpError } from '../errors.js';
import { answerOf, describe, matches, pathText, type DestinationRequest, type MockRule } from './mock-rules.js';
import type { OutboundInterceptor, OutboundOrigin, OutboundRequest, OutboundResponse } from './types.js';
import { readAll } from '../../lib/read-all.js';
import { tapHead } from '../../lib/stream-head.js';

export type {
  DestinationRequest,
  DestinationSender,
  MockAnswer,
  MockMatch,
  MockReply,
  MockRule,
  PathMatcher,
} from './mock-rules.js';
export { answerProblem } from './mock-rules.js';

/** A request that reached its destination, or the mock in its place. */
export interface DestinationCall extends DestinationRequest {
  /** Answered by a mock (true) or sent to the network (false). */
  mocked: boolean;
  /** The answer's status, once it came (undefined: not yet, or the destination could not be reached). */
  status: number | undefined;
}

/** A mock that would still answer: used fewer times than it was given, or persistent and never used. */
export interface PendingMock {
  origin: string;
  method: string;
  path: string;
  /** How many more requests it answers (Infinity: persistent). */
  remaining: number;
  used: number;
}

/** How many of an origin's mocks a problem lists before "and N more". */
const LISTED_MOCKS = 10;
/** What a tenant's calls() and unmatched() keep: the most recent, so a long test's memory stays bounded. */
export const REMEMBERED_REQUESTS = 1000;
/** How much of each body a record keeps (1,000 of them per tenant): the rest is cut, `truncated` says so. */
export const RECORDED_BODY_BYTES = 64 * 1024;

function remember<T>(list: T[], item: T): void {
  list.push(item);
  if (list.length > REMEMBERED_REQUESTS) list.splice(0, list.length - REMEMBERED_REQUESTS);
}

/** One tenant's mocks, and what its code and proxies sent. */
export class TenantMocks {
  private readonly rules = new Map<string, MockRule[]>();
  readonly calls: DestinationCall[] = [];
  readonly unmatched: DestinationRequest[] = [];

  /** Adds a mock after those of its origin already there (the first that matches answers). */
  add(rule: MockRule): void {
    const list = this.rules.get(rule.origin);
    if (list) list.push(rule);
    else this.rules.set(rule.origin, [rule]);
  }

  /** The mocks of an origin, undefined when it has none (its requests go to the network). */
  of(origin: string): readonly MockRule[] | undefined {
    return this.rules.get(origin);
  }

  pending(): PendingMock[] {
    const pending: PendingMock[] = [];
    for (const list of this.rules.values())
      for (const rule of list)
        if (rule.remaining === Number.POSITIVE_INFINITY ? rule.used === 0 : rule.remaining > 0)
          pending.push({
            origin: rule.origin,
            method: rule.method,
            path: pathText(rule.path),
            remaining: rule.remaining,
            used: rule.used,
          });
    return pending;
  }

  /** Forgets every mock and what was recorded. */
  reset(): void {
    this.rules.clear();
    this.calls.length = 0;
    this.unmatched.length = 0;
  }
}

/** Every tenant's mocks, and the one interceptor that applies them. */
export class DestinationMocks {
  private readonly tenants = new Map<string, TenantMocks>();

  /** The tenant's mocks, registered (recording) from now on. */
  tenant(tenantId: string): TenantMocks {
    let mocks = this.tenants.get(tenantId);
    if (!mocks) this.tenants.set(tenantId, (mocks = new TenantMocks()));
    return mocks;
  }

  /** The tenant's mocks and records go (its dispose): its requests go to the network again. */
  forget(tenantId: string): void {
    this.tenants.get(tenantId)?.reset();
    this.tenants.delete(tenantId);
  }

  /** For `emulator.outbound.use(...)`. */
  readonly interceptor: OutboundInterceptor = (request, origin, next) => {
    const mocks = this.tenants.get(origin.tenantId);
    return mocks ? this.intercepted(mocks, request, origin, next) : next(request);
  };

  private async intercepted(
    mocks: TenantMocks,
    request: OutboundRequest,
    origin: OutboundOrigin,
    next: (request: OutboundRequest) => Promise<OutboundResponse>,
  ): Promise<OutboundResponse> {
    const rules = mocks.of(request.url.origin);
    if (rules === undefined) return this.passed(mocks, request, origin, next);
    // Read whole (user code may write its body over time), so that it can be matched.
    const body = request.body instanceof Readable ? await readAll(request.body) : request.body;
    const seen = requestOf(request, body, origin);
    const rule = rules.find((candidate) => matches(candidate, seen, request.url));
    if (!rule) {
      remember(mocks.unmatched, kept(seen));
      throw notMocked(seen, request.url.origin, rules);
    }
    rule.remaining -= 1;
    rule.used += 1;
    const call: DestinationCall = { ...kept(seen), mocked: true, status: undefined };
    remember(mocks.calls, call);
    const response = await answerOf(rule, seen, request.signal);
    call.status = response.status;
    return response;
  }

  /**
   * A request to an origin without mocks: recorded, and sent on as it came. A body that streams
   * (user code writing it over time) streams on, its first 64 KB recorded as they pass.
   */
  private async passed(
    mocks: TenantMocks,
    request: OutboundRequest,
    origin: OutboundOrigin,
    next: (request: OutboundRequest) => Promise<OutboundResponse>,
  ): Promise<OutboundResponse> {
    const { body } = request;
    const call: DestinationCall = {
      ...requestOf(request, undefined, origin),
      ...keptBody(body instanceof Readable ? undefined : body),
      mocked: false,
      status: undefined,
    };
    remember(mocks.calls, call);
    const sent = body instanceof Readable ? { ...request, body: recording(body, call) } : request;
    const response = await next(sent);
    call.status = response.status;
    return response;
  }
}

/** `request` as a record keeps it: its body's first 64 KB, and `truncated` when there was more. */
function kept<T extends DestinationRequest>(request: T): T {
  return { ...request, ...keptBody(request.body) };
}

/** What a record keeps of a body: its first 64 KB as text, `truncated` when there was more. */
function keptBody(body: Buffer | string | undefined): { body: string; truncated?: true } {
  if (body === undefined) return { body: '' };
  // A UTF-16 unit is 3 UTF-8 bytes at most: most texts are known short without being measured.
  if (
    typeof body === 'string' &&
    (body.length * 3 <= RECORDED_BODY_BYTES || Buffer.byteLength(body) <= RECORDED_BODY_BYTES)
  )
    return { body };
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  if (bytes.length <= RECORDED_BODY_BYTES) return { body: bytes.toString() };
  return { body: bytes.subarray(0, RECORDED_BODY_BYTES).toString(), truncated: true };
}

/** `stream` passed on as it is, its first 64 KB written into `call.body` once it has ended. */
function recording(stream: Readable, call: DestinationCall): Readable {
  return tapHead(stream, RECORDED_BODY_BYTES, ({ head, size, complete }) => {
    if (!complete) return;
    call.body = head.toString();
    if (size > RECORDED_BODY_BYTES) call.truncated = true;
  });
}

function requestOf(
  request: OutboundRequest,
  body: Buffer | string | undefined,
  origin: OutboundOrigin,
): DestinationRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
  const { url } = request;
  return {
    method: request.method.toUpperCase(),
    url: url.href,
    path: `${url.pathname}${url.search}`,
    headers,
    body: body === undefined ? '' : body.toString(),
    from: { kind: origin.kind, name: origin.name, traceId: origin.traceId },
  };
}

/** The problem of a request no mock of its origin matches: what was asked, and what is there. */
function notMocked(request: DestinationRequest, origin: string, rules: readonly MockRule[]): HttpError {
  const listed = rules.slice(0, LISTED_MOCKS).map((rule) => {
    const state =
      rule.remaining === Number.POSITIVE_INFINITY
        ? 'persistent'
        : rule.remaining > 0
          ? `${rule.remaining} left`
          : `used up: answered ${rule.used}`;
    return `${describe(rule)} (${state})`;
  });
  const more = rules.length > LISTED_MOCKS ? `, and ${rules.length - LISTED_MOCKS} more` : '';
  const error = new HttpError(
    502,
    `No mock of ${origin} matches ${request.method} ${request.path}; its mocks: ${listed.join(', ')}${more}. ` +
      `Add one with t.destinations.intercept('${origin}').on('${request.method}', '${request.path.split('?')[0]}').`,
    {
      type: PROBLEM_TYPES.destinationNotMocked,
      title: 'No destination mock matched',
      extensions: { method: request.method, url: request.url, mocks: listed },
    },
  );
  // User code's request fails with this code (and the detail as its message).
  return Object.assign(error, { code: 'ERR_SVC_NOT_MOCKED' });
}
