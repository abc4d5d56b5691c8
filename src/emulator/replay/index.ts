/**
 * `svc replay`: the last calls of each tenant kept (store.ts), collected as they pass
 * (capture.ts), and re-run through today's code with a diff per stage (rerun.ts). Made before
 * the emulator starts (its interceptor is the first on the outbound gateway, so that a re-run's
 * requests are answered before any mock or recorder sees them), given the emulator's parts once
 * they are up (`attach`).
 */
import { HttpError } from '../errors.js';
import type { EventHub } from '../events.js';
import type { OutboundGateway } from '../outbound/index.js';
import type { ProxyAnswer, ProxyCall, ProxyPipeline } from '../proxy/pipeline.js';
import type { ReactorInvocations } from '../services/reactor-invocation.js';
import type { TokenService } from '../services/tokens.js';
import type { Store } from '../store/store.js';
import { CallCapture } from './capture.js';
import type { RawAnswer } from './pending.js';
import { rerun } from './rerun.js';
import { CallStore } from './store.js';
import type { ReplayAnswer } from '../../api/replay.js';

export { CALLS_PER_TENANT } from './store.js';

export class CallReplays {
  readonly store = new CallStore();
  readonly capture: CallCapture;

  constructor(unkept?: (traceId: string, error: unknown) => void) {
    this.capture = new CallCapture((call) => this.store.add(call), unkept);
  }

  /**
   * Made with the gateway, whose first interceptor is its capture's, and the event hub (console
   * lines; a call that could not be kept is a warning naming the error's kind only, as its message
   * may hold the call's plaintext).
   */
  static on(gateway: OutboundGateway, events: EventHub): CallReplays {
    const replays = new CallReplays((traceId, error) =>
      events.publish({
        type: 'warning',
        traceId,
        message: `svc replay could not keep call ${traceId} (${error instanceof Error ? error.name : typeof error}): it cannot be replayed.`,
      }),
    );
    gateway.use(replays.capture.interceptor);
    events.subscribe(replays.capture.onEvent);
    return replays;
  }

  private parts:
    | { store: Store; tokens: TokenService; pipeline: ProxyPipeline; reactors: ReactorInvocations }
    | undefined;

  /** The emulator's parts a re-run goes through; the reactor calls are watched from now on. */
  attach(parts: { store: Store; tokens: TokenService; pipeline: ProxyPipeline; reactors: ReactorInvocations }): void {
    this.parts = parts;
    this.capture.allowCards = parts.tokens.leaks.allow;
    parts.reactors.observer = this.capture.reactor;
  }

  /** The proxy pipeline's invoke, its answer or error told to the capture. */
  async invoked(call: ProxyCall, invoke: (call: ProxyCall) => Promise<ProxyAnswer>): Promise<ProxyAnswer> {
    let answer: ProxyAnswer;
    try {
      answer = await invoke(call);
    } catch (error) {
      this.capture.proxyEnded(call, undefined, error);
      throw error;
    }
    this.capture.proxyEnded(call, () => rawAnswer(answer));
    return answer;
  }

  /** Re-runs a kept call of the tenant (404: none with this trace id is kept). */
  async replay(tenantId: string, traceId: string, options: { live?: boolean } = {}): Promise<ReplayAnswer> {
    const kept = this.store.get(tenantId, traceId);
    if (!kept || !this.parts)
      throw new HttpError(
        404,
        `No kept call with trace id ${traceId} (unknown, another tenant's, asynchronous, or no longer kept: the last ${this.store.bounds.perTenant} per tenant are).`,
      );
    return rerun({ ...this.parts, capture: this.capture }, kept, options.live === true);
  }
}

function rawAnswer(answer: ProxyAnswer): RawAnswer {
  const { body } = answer;
  if (body === undefined || typeof body === 'string' || Buffer.isBuffer(body))
    return { status: answer.status, headers: answer.headers, body };
  return { status: answer.status, headers: answer.headers, body: undefined, fromDestination: true };
}
