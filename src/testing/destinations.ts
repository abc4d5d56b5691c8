/**
 * `t.destinations`: a tenant's destinations mocked inside the emulator (never by patching this
 * process's globals), for its proxies' forwards and its reactors' and transforms' `https` requests
 * alike. An origin with mocks answers only what they match (the rest fails, and shows in
 * `unmatched()`); an origin without goes to the network. Like undici's MockAgent and nock, a mock
 * answers once unless `.times(n)` or `.persist()` says otherwise, the first that matches answering.
 *
 *   t.destinations.intercept('https://api.example.com').on('POST', '/v1/charges').reply(201, { id: 'ch_1' });
 */
import {
  answerProblem,
  type DestinationCall,
  type DestinationRequest,
  type MockAnswer,
  type MockMatch,
  type MockReply,
  type MockRule,
  type PathMatcher,
  type PendingMock,
  type TenantMocks,
} from '../emulator/outbound/mocks.js';
import type { OutboundInterceptor } from '../emulator/outbound/types.js';
import {
  type OnMiss,
  type OpenedRecording,
  openRecording,
  RecordingSetupError,
  refusalMessage,
  type RecordingProblem,
} from '../emulator/recording/index.js';

export type {
  DestinationCall,
  DestinationRequest,
  DestinationSender,
  MockAnswer,
  MockMatch,
  PathMatcher,
  PendingMock,
} from '../emulator/outbound/mocks.js';

/** A reply function: the request as the destination would have received it, to the answer. */
export type MockHandler = (request: DestinationRequest) => MockAnswer | Promise<MockAnswer>;

/** How often, and how late, a mock answers: on `.on(...)` before `.reply`, or on what `.reply` returns. */
export interface MockScope {
  /** Answers `n` requests (default 1). */
  times(n: number): MockScope;
  /** Answers every request it matches. */
  persist(): MockScope;
  /** Answers `ms` milliseconds late (real time). */
  delay(ms: number): MockScope;
}

export interface MockInterceptor extends MockScope {
  /** Answers `status` with `body` (an object or array as JSON, a string as text, a Buffer as bytes) and `headers`. */
  reply(status: number, body?: unknown, headers?: Record<string, string | string[]>): MockScope;
  /** Answers what `handler` returns for the request (`{ status, headers?, body? }`, or a promise of it). */
  reply(handler: MockHandler): MockScope;
  /** Fails the request as an unreachable destination would (default ECONNREFUSED). */
  replyWithError(error?: string | { code?: string; message?: string }): MockScope;
  times(n: number): MockInterceptor;
  persist(): MockInterceptor;
  delay(ms: number): MockInterceptor;
}

/** The mocks of one origin. */
export interface OriginMocks {
  /**
   * A mock of `method` ('POST', or '*' for any) on `path`: a string is the path exactly (with '?',
   * the query too; without, any query), a RegExp is tested on the path and query, a function is
   * given them. `match` narrows it further by query parameters, headers or body.
   */
  on(method: string, path: PathMatcher, match?: MockMatch): MockInterceptor;
}

/** A recording or replay of one tenant's destinations (`record`, `replay`): ends with the tenant. */
export interface DestinationRecording {
  /** Writes the cassettes changed so far; rejects when one was refused (plaintext left in it) or not written. */
  flush(): Promise<void>;
  /** Stops recording or replaying and writes what is left (rejects as flush does); safe to call more than once. */
  stop(): Promise<void>;
}

/** Where a tenant's recordings attach: the emulator's outbound gateway, filtered by the tenant's id. */
export interface DestinationsLink {
  tenantId: string;
  use: (interceptor: OutboundInterceptor) => () => void;
}

/** A tenant's destinations: their mocks, and what was sent to them. */
export class TenantDestinations {
  private readonly recordings: OpenedRecording[] = [];

  constructor(
    private readonly mocks: TenantMocks,
    private readonly link?: DestinationsLink,
  ) {}

  /**
   * Records the tenant's exchanges with its destinations (those no mock answers) to cassettes in
   * `dir`, one file per origin, every detokenized value as its `{{ token }}` expression; written as
   * they come and on `stop()` or the tenant's dispose.
   */
  record(dir: string): Promise<DestinationRecording> {
    return this.open('record(dir)', { record: { dir: checkedDir(dir, 'record(dir)') } });
  }

  /**
   * Answers the tenant's destinations from the cassettes in `dir` (a mock still answers first); a
   * request no cassette answers fails (`onMiss: 'fail'`, the default), goes to the network
   * (`'passthrough'`) or goes there and is recorded into `dir` (`'record'`).
   */
  replay(dir: string, options: { onMiss?: OnMiss } = {}): Promise<DestinationRecording> {
    return this.open('replay(dir)', {
      replay: { dir: checkedDir(dir, 'replay(dir)'), ...(options.onMiss !== undefined && { onMiss: options.onMiss }) },
    });
  }

  /** Ends every recording and replay of the tenant (its dispose); rejects when a cassette was refused. */
  async closeRecordings(): Promise<void> {
    const problems: RecordingProblem[] = [];
    for (const recording of this.recordings.splice(0)) problems.push(...(await recording.close()));
    throwProblems(problems);
  }

  private async open(
    what: string,
    options: Pick<Parameters<typeof openRecording>[0], 'record' | 'replay'>,
  ): Promise<DestinationRecording> {
    const link = this.link;
    if (!link) throw new Error(`svc/testing: ${what} needs a tenant of startSvc().`);
    let opened: OpenedRecording;
    try {
      opened = await openRecording({
        ...options,
        use: link.use,
        filter: (origin) => origin.tenantId === link.tenantId,
      });
    } catch (error) {
      throw error instanceof RecordingSetupError ? new Error(`svc/testing: ${what}: ${error.message}`) : error;
    }
    this.recordings.push(opened);
    let stopped: Promise<void> | undefined;
    return {
      flush: async () => throwProblems(await opened.flush()),
      stop: () => {
        stopped ??= (async () => {
          const at = this.recordings.indexOf(opened);
          if (at >= 0) this.recordings.splice(at, 1);
          throwProblems(await opened.close());
        })();
        return stopped;
      },
    };
  }

  /** The mocks of `origin` ('https://api.example.com'): from the first, its requests answer only what they match. */
  intercept(origin: string): OriginMocks {
    const normalized = originOf(origin);
    return { on: (method, path, match = {}) => this.interceptor(normalized, method, path, match) };
  }

  /**
   * What the tenant's proxies and code sent, in order, as the destination (or its mock) received
   * it: detokenized, after the request transform. Mocked and real requests alike; not unmatched ones.
   */
  calls(): DestinationCall[] {
    return [...this.mocks.calls];
  }

  /** The requests to an origin with mocks that none matched (each failed its call). */
  unmatched(): DestinationRequest[] {
    return [...this.mocks.unmatched];
  }

  /** The mocks that would still answer (a `.times(n)` not used up, a `.persist()` never used). */
  pending(): PendingMock[] {
    return this.mocks.pending();
  }

  /** Forgets every mock of the tenant and what was recorded: its requests go to the network again. */
  reset(): void {
    this.mocks.reset();
  }

  private interceptor(origin: string, method: string, path: PathMatcher, match: MockMatch): MockInterceptor {
    const rule = newRule(origin, method, path, match);
    let added = false;
    const scope: MockScope = {
      times: (n) => {
        if (!Number.isInteger(n) || n < 1)
          throw new TypeError(`svc/testing: times(n) takes a whole number from 1, not ${String(n)}.`);
        rule.remaining = n - rule.used;
        return scope;
      },
      persist: () => {
        rule.remaining = Number.POSITIVE_INFINITY;
        return scope;
      },
      delay: (ms) => {
        if (!Number.isFinite(ms) || ms < 0)
          throw new TypeError(`svc/testing: delay(ms) takes milliseconds from 0, not ${String(ms)}.`);
        rule.delayMs = ms;
        return scope;
      },
    };
    const add = (reply: MockReply): MockScope => {
      if (added) throw new Error(`svc/testing: the mock ${method} ${String(path)} of ${origin} already has its reply.`);
      added = true;
      rule.reply = reply;
      this.mocks.add(rule);
      return scope;
    };
    const interceptor: MockInterceptor = {
      reply: (statusOrHandler: number | MockHandler, body?: unknown, headers?: Record<string, string | string[]>) => {
        if (typeof statusOrHandler === 'function') return add({ handler: statusOrHandler });
        const answer: MockAnswer = {
          status: statusOrHandler,
          ...(body !== undefined && { body }),
          ...(headers !== undefined && { headers }),
        };
        const problem = answerProblem(answer);
        if (problem !== undefined) throw new TypeError(`svc/testing: reply() was given ${problem}.`);
        return add({ answer });
      },
      replyWithError: (error = {}) => {
        const given = typeof error === 'string' ? { message: error } : error;
        return add({ error: { code: given.code ?? 'ECONNREFUSED', message: given.message ?? 'connection refused' } });
      },
      times: (n) => {
        scope.times(n);
        return interceptor;
      },
      persist: () => {
        scope.persist();
        return interceptor;
      },
      delay: (ms) => {
        scope.delay(ms);
        return interceptor;
      },
    };
    return interceptor;
  }
}

function newRule(origin: string, method: string, path: PathMatcher, match: MockMatch): MockRule {
  if (typeof method !== 'string' || !/^(\*|[A-Za-z]+)$/.test(method))
    throw new TypeError(
      `svc/testing: on(method, path) takes a method ('POST', or '*' for any), not ${String(method)}.`,
    );
  const pathOk =
    (typeof path === 'string' && path.startsWith('/')) || path instanceof RegExp || typeof path === 'function';
  if (!pathOk)
    throw new TypeError(
      `svc/testing: on(method, path) takes a path starting with '/', a RegExp or a function, not ${String(path)}.`,
    );
  if (match === null || typeof match !== 'object')
    throw new TypeError('svc/testing: on(method, path, match) takes match as { query?, headers?, body? }.');
  return {
    origin,
    method: method.toUpperCase(),
    path,
    match,
    // Set by reply().
    reply: { error: { code: 'ERR_SVC_NO_REPLY', message: 'no reply' } },
    remaining: 1,
    used: 0,
    delayMs: 0,
  };
}

/** 'https://api.example.com' as a URL's origin; a path, query or other scheme is refused. */
function originOf(origin: string): string {
  let url: URL | undefined;
  try {
    url = typeof origin === 'string' ? new URL(origin) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    throw new TypeError(
      `svc/testing: intercept(origin) takes an origin such as 'https://api.example.com', not ${JSON.stringify(origin)}.`,
    );
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    throw new TypeError(
      `svc/testing: intercept(origin) takes an origin only ('${url.origin}'); give the path to .on(method, path).`,
    );
  return url.origin;
}

function checkedDir(dir: string, what: string): string {
  if (typeof dir !== 'string' || dir.trim() === '')
    throw new TypeError(`svc/testing: ${what} takes a folder, not ${JSON.stringify(dir)}.`);
  return dir;
}

/** Refused or unwritten cassettes, as one error naming each (never a value). */
function throwProblems(problems: readonly RecordingProblem[]): void {
  if (problems.length === 0) return;
  const lines = problems.map((problem) =>
    problem.findings ? refusalMessage(problem) : `Recording: ${problem.file} was not written: ${problem.error}.`,
  );
  throw new Error(`svc/testing: ${lines.join(' ')}`);
}
