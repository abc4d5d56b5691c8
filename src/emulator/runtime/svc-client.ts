/**
 * `req.svc` inside the sandbox process: each call is an `rpc` message to the emulator, answered
 * under the bound Application's permissions (services/req-svc.ts), and settled here when its
 * `rpc-result` comes back, as the platform's error class of its status.
 */
import { MAX_DEPTH, exceedsDepth } from '../../lib/json-depth.js';
import type { Loaded } from './compartment.js';
import { USER_ERROR_STATUS } from './platform-errors.js';
import type { FromSandbox, SvcMethod, ToSandbox } from './protocol.js';

/** What `req.svc` needs of the call it serves (its record is the host's, out of user code's reach). */
export interface SvcCaller {
  id: number;
  cancelled: boolean;
  svcInFlight: number;
}

type ErrorClass = new (message: string) => Error;

export class SvcCalls {
  private seq = 0;
  private readonly pending = new Map<
    number,
    { caller: SvcCaller; resolve: (value: unknown) => void; reject: (problem: unknown) => void }
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
    const call = (method: SvcMethod, params: unknown) =>
      new Promise((resolve, reject) => {
        const limit = this.maxInFlight();
        if (caller.svcInFlight >= limit) {
          throw new (loaded.errors.RateLimitError as ErrorClass)(
            `Too many req.svc calls in flight (at most ${limit} per invocation); await them.`,
          );
        }
        if (caller.cancelled) throw new Error('This invocation was stopped.');
        if (exceedsDepth(params, MAX_DEPTH)) {
          throw new (loaded.errors.BadRequestError as ErrorClass)(
            `The JSON is nested deeper than ${MAX_DEPTH} levels.`,
          );
        }
        const id = ++this.seq;
        caller.svcInFlight++;
        this.pending.set(id, {
          caller,
          resolve,
          reject: (problem) => {
            const { status, detail } = problem as { status: number; detail: string };
            const name = Object.entries(USER_ERROR_STATUS).find(([, code]) => code === status)?.[0];
            const Class = ((name ? loaded.errors[name] : undefined) ?? Error) as ErrorClass;
            reject(new Class(detail));
          },
        });
        this.post({ type: 'rpc', id, invocation: caller.id, method, params: JSON.stringify(params ?? null) ?? 'null' });
      });
    return harden({
      tokens: {
        create: (body: unknown) => call('tokens.create', body),
        retrieve: (id: unknown) => call('tokens.retrieve', id),
        delete: (id: unknown) => call('tokens.delete', id),
        list: (query: unknown) => call('tokens.list', query ?? {}),
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
    else pending.reject(message.error);
  }
}
