/**
 * `req.svc` inside the sandbox process: the client the platform injects (the vendor's JS SDK), as
 * far as the emulator answers it. Each call is an `rpc` message to the emulator, answered under the
 * bound Application's permissions (services/req-svc.ts) and settled here when its `rpc-result`
 * comes back. As that client does, a token's fields are sent snake_cased and come back camelCased
 * (svc-casing.ts), tokenize and detokenize as they are; a refusal rejects with `SvcApiError` (the
 * SDK's BasisTheoryApiError renamed): `status`, and the problem the API answered as `data`.
 */
import { MAX_DEPTH, exceedsDepth } from '../../lib/json-depth.js';
import type { Loaded } from './compartment.js';
import { API_ERROR_CLASS } from './platform-errors.js';
import type { FromSandbox, SvcMethod, ToSandbox } from './protocol.js';
import { tokenRequest, tokenResponse } from './svc-casing.js';

/** What `req.svc` needs of the call it serves (its record is the host's, out of user code's reach). */
export interface SvcCaller {
  id: number;
  cancelled: boolean;
  svcInFlight: number;
}

type ApiErrorClass = new (message: string, status: number, data: unknown) => Error;

/** The problem of a refusal the sandbox makes itself, as the API would have answered it. */
function problem(status: number, title: string, detail: string) {
  return { type: `urn:svc:problem:${status === 429 ? 'rate-limited' : 'bad-request'}`, title, status, detail };
}

export class SvcCalls {
  private seq = 0;
  private readonly pending = new Map<
    number,
    { caller: SvcCaller; resolve: (value: unknown) => void; reject: (answer: { status: number }) => void }
  >();

  constructor(
    private readonly post: (message: FromSandbox) => void,
    /** How many calls one invocation may have in flight. */
    private readonly maxInFlight: () => number,
  ) {}

  /** Calls awaiting their answer. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** The `req.svc` of one invocation of `loaded`: frozen, its methods user code cannot replace. */
  clientFor(caller: SvcCaller, loaded: Loaded) {
    const ApiError = loaded.errors[API_ERROR_CLASS] as unknown as ApiErrorClass;
    // As the SDK's axios says it; the problem is the error's `data`.
    const refused = (answer: { status: number }) =>
      new ApiError(`Request failed with status code ${answer.status}`, answer.status, answer);
    // `request` renames what the code sent (svc-casing.ts) once the depth is checked, inside the
    // promise: a body nested past the limit, cyclic or with a getter that throws rejects the call
    // (the 400 the API would answer), never a stack overflow thrown at once.
    const call = (
      method: SvcMethod,
      given: unknown,
      shape: (value: unknown) => unknown = (value) => value,
      request: (value: unknown) => unknown = (value) => value,
    ) =>
      new Promise((resolve, reject) => {
        const limit = this.maxInFlight();
        if (caller.svcInFlight >= limit) {
          throw refused(
            problem(
              429,
              'Too many requests',
              `Too many req.svc calls in flight (at most ${limit} per invocation); await them.`,
            ),
          );
        }
        if (caller.cancelled) throw new Error('This invocation was stopped.');
        if (exceedsDepth(given, MAX_DEPTH)) {
          throw refused(problem(400, 'Bad request', `The JSON is nested deeper than ${MAX_DEPTH} levels.`));
        }
        const params = request(given);
        const id = ++this.seq;
        caller.svcInFlight++;
        this.pending.set(id, {
          caller,
          resolve: (value) => resolve(shape(value)),
          reject: (answer) => reject(refused(answer)),
        });
        this.post({ type: 'rpc', id, invocation: caller.id, method, params: JSON.stringify(params ?? null) ?? 'null' });
      });
    // A second argument (the SDK's request options: apiKey, correlationId) is not taken: calls act under the bound Application.
    return harden({
      tokens: {
        create: (body: unknown) => call('tokens.create', body, tokenResponse, tokenRequest),
        retrieve: (id: unknown) => call('tokens.retrieve', id, tokenResponse),
        delete: (id: unknown) => call('tokens.delete', id),
        list: (query: unknown) => call('tokens.list', query ?? {}, tokenResponse, tokenRequest),
      },
      tokenize: (body: unknown) => call('tokenize', body),
      detokenize: (body: unknown) => call('detokenize', body),
    });
  }

  /** The emulator's answer to a call: it settles in user code. */
  settle(message: Extract<ToSandbox, { type: 'rpc-result' }>): void {
    const pending = this.pending.get(message.id);
    if (!pending) return;
    this.pending.delete(message.id);
    pending.caller.svcInFlight--;
    if (message.ok) pending.resolve(message.value === undefined ? undefined : JSON.parse(message.value));
    else pending.reject(message.error ?? { status: 500 });
  }
}
