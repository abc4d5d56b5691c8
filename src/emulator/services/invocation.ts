import type { Explanation } from '../../api/explanation.js';
import { PROBLEM_TYPES } from '../../api/problem.js';
import { HttpError } from '../errors.js';
import type { EmitEvent } from '../events.js';
import { checkedCustomResponse } from '../user-code-headers.js';
import { type Instance, UserCodeError } from '../runtime/index.js';
import type { ApplicationRecord } from '../store/records.js';
import { svcHandler } from './req-svc.js';
import type { TokenService } from './tokens.js';

/**
 * The code's side of one call of user code (a reactor, or one of a proxy's transforms), resolved
 * once at the start of the call and handed down: what it is called, its loaded version, its
 * configuration and the Application bound to it.
 */
export interface CodeCall {
  /** What the invocation event says ran: a reactor, or a proxy's transform. */
  kind: 'reactor' | 'transform';
  /** As the invocation event names it: `charge`, `checkout (request)`. */
  name: string;
  /** The reactor's or the proxy's id. */
  id: string;
  tenantId: string;
  /** How messages name the code: `Reactor charge`, `The request transform of proxy checkout`. */
  owner: string;
  /** How a refused `req.svc` names the code: `reactor charge`, `proxy checkout`. */
  svcOwner: string;
  instance: Instance;
  configuration: Record<string, string>;
  /**
   * The Application whose grants `req.svc` (and a reactor's tokenize block) get, as found when the
   * call began, as a caller's grants are those found when its request began; none: `req.svc` is null.
   */
  bound: ApplicationRecord | undefined;
  /**
   * The bound Application as it is now: each `req.svc` call is a request of its own and looks again,
   * so that one deleted, or whose grants changed, while the code runs is held to that at once.
   */
  boundNow: () => ApplicationRecord | undefined;
  /** The caller's transaction (`SVC-TRANSACTION-ID`), which `req.svc` calls act in. */
  transactionId?: string | undefined;
  requestId: string;
  /**
   * The server's id of this run (leaks/guard.ts LeakCall.watchId): what its console lines and
   * requests carry from the sandbox, never the caller's trace id (two calls may share one).
   */
  watchId: string;
  timeoutMs: number;
  /** A re-run of a kept call (`svc replay`): `req.svc` reads, and refuses every write. */
  rerun?: boolean;
  /**
   * The Application whose key made the call (checked before the code ran), named by the explanation
   * of a refusal the code chose; null: an anonymous proxy's caller, which sent no key.
   */
  caller?: ApplicationRecord | null;
}

/** What running code needs of the emulator. */
export interface CodeDeps {
  tokens: TokenService;
  emit: EmitEvent;
}

/**
 * Runs `call`'s code once on `args` (its `req.svc` under the bound Application, if any) and
 * `finish`es what it returned; whatever either throws is the call's failure. The call is reported
 * once as an `invocation` event, with its status and time (reportInvocation), then answered.
 */
export async function invokeCode<T>(
  deps: CodeDeps,
  call: CodeCall,
  args: unknown,
  finish: (value: unknown) => T | Promise<T>,
): Promise<T> {
  const started = performance.now();
  const { leaks } = deps.tokens;
  const watched = leaks.callOf(call.watchId);
  // Its code's https requests carry its configuration values: recordings mask them.
  if (watched && !watched.configuration) watched.configuration = configurationValues(call.configuration);
  try {
    const svc = call.bound
      ? svcHandler(
          deps.tokens,
          () => {
            const application = call.boundNow();
            return application && { tenantId: call.tenantId, application };
          },
          call.svcOwner,
          call.transactionId,
          call.rerun,
          // What req.svc detokenizes is the call's plaintext too.
          watched?.secrets,
        )
      : null;
    // The tenant's clock, when it was moved: `Date` in the code reads it (0, never moved: nothing is sent).
    const clockOffsetMs = deps.tokens.clocks.offset(call.tenantId);
    const { value } = await call.instance.invoke(
      { args, configuration: call.configuration },
      { timeoutMs: call.timeoutMs, requestId: call.watchId, svc, ...(clockOffsetMs !== 0 && { clockOffsetMs }) },
    );
    // A value finished at once (no tokenize block, a transform's) takes no turn of the microtask queue.
    const finished = finish(value);
    const result = finished instanceof Promise ? await finished : finished;
    // Redacted of the call's plaintext and of what its code version was revealed.
    leaks.fromCode(call.instance.id, call.watchId, () => reportInvocation(deps.emit, call, started, 200));
    return result;
  } catch (thrown) {
    const error = refusedByCode(checkedCustomResponse(thrown, call.owner), call);
    leaks.fromCode(call.instance.id, call.watchId, () =>
      reportInvocation(
        deps.emit,
        call,
        started,
        error instanceof HttpError ? error.status : 500,
        error instanceof HttpError ? error : undefined,
        (thrown as { userStack?: string }).userStack,
      ),
    );
    // The event is redacted whatever the mode; the caller's answer is as the mode says.
    throw leaks.checkError(leaks.callOf(call.watchId), error);
  }
}

/**
 * A 401 or 403 the code chose (an AuthenticationError, an AuthorizationError) explained as what it
 * is: the caller's key was checked and the code refused, not an unauthenticated request.
 */
function refusedByCode(error: unknown, call: CodeCall): unknown {
  if (!(error instanceof UserCodeError) || (error.status !== 401 && error.status !== 403) || error.custom) return error;
  const application = call.caller ?? null;
  const explanation: Explanation = {
    decision: 'denied',
    reason: `${call.owner} refused the call: its code threw a ${error.status} (${error.detail})${application ? '' : '; the caller sent no key, as the proxy allows'}.`,
    application: application && { id: application.id, name: application.name, type: application.type },
  };
  return new UserCodeError(error.status, error.detail, { ...error.options, explanation });
}

/** A configuration's values, listed once per configuration object. */
const configurationLists = new WeakMap<Record<string, string>, readonly string[]>();

function configurationValues(configuration: Record<string, string>): readonly string[] {
  let values = configurationLists.get(configuration);
  if (!values) configurationLists.set(configuration, (values = Object.values(configuration)));
  return values;
}

/** The `invocation` event of a call that began at `started` (performance.now()) and ended with `status`. */
export function reportInvocation(
  emit: EmitEvent,
  call: CodeCall,
  started: number,
  status: number,
  error?: HttpError,
  stack?: string,
): void {
  emit({
    type: 'invocation',
    kind: call.kind,
    name: call.name,
    id: call.id,
    tenantId: call.tenantId,
    status,
    ms: Math.round((performance.now() - started) * 10) / 10,
    requestId: call.requestId,
    ...(error && { error: `${error.title}: ${thrownWords(error) ?? error.detail}`, stack }),
  });
}

/**
 * What a platform error the code threw says, for the log: its `errors` (the code's own words, where
 * the detail is its class's fixed text), or undefined for any other error.
 */
function thrownWords(error: HttpError): string | undefined {
  if (error.type !== PROBLEM_TYPES.userCode) return undefined;
  const words = Object.entries(error.errors ?? {}).flatMap(([field, messages]) =>
    messages.map((message) => (field === 'error' ? message : `${field}: ${message}`)),
  );
  return words.length === 0 ? undefined : words.join('; ');
}
