/**
 * Where `svc replay` sees calls: hooks the proxy pipeline and the reactor invocation call as a call
 * passes its stages (proxy/pipeline.ts ProxyObserver, services/reactor-invocation.ts
 * ReactorObserver), the outbound gateway (`interceptor`, each exchange by the origin's trace id)
 * and the console lines of the event hub. A call is collected by its trace id while it runs, kept
 * (build.ts) once it and its bodies have ended; a re-run is collected the same way and handed to
 * the re-run that waits for it instead of being kept.
 */
import type { EmulatorEvent } from '../events.js';
import type { OutboundInterceptor } from '../outbound/index.js';
import type { ProxyCall } from '../proxy/pipeline.js';
import type { Caller } from '../services/applications.js';
import type { CallContext } from '../services/call-context.js';
import type { ProxyRecord, ReactorRecord } from '../store/records.js';
import { buildCall } from './build.js';
import { exchangeOf } from './exchanges.js';
import { KEPT_CONSOLE_LINES, type PendingCall, type RawAnswer, type Served } from './pending.js';
import { KEPT_BODY_BYTES } from './redact.js';
import type { KeptCall } from './types.js';

/** How long a call's streamed bodies may stay open after it ended before it is kept as it is. */
const BODY_GRACE_MS = 10_000;

interface Rerun {
  sink: (call: KeptCall) => void;
  served: Served;
}

export class CallCapture {
  private readonly pending = new Map<string, PendingCall>();
  private readonly reruns = new Map<string, Rerun>();
  /**
   * The pending call each proxy call opened: its end is told by the call, not by its trace id (a
   * caller chooses its trace id: another call under the same one, of any tenant, refused before it
   * began, must not end this one).
   */
  private readonly opened = new WeakMap<ProxyCall, PendingCall>();

  /** Declared test card numbers (the leak guard's): kept as they are, as a recording keeps them. */
  allowCards: ReadonlySet<string> | undefined;

  constructor(
    private readonly keep: (call: KeptCall) => void,
    /** Told of a call that could not be kept (a bug in the capture): never its values. */
    private readonly unkept: (traceId: string, error: unknown) => void = () => {},
  ) {}

  /** A re-run's trace id: what it collects goes to `sink`, its requests are answered per `served`. */
  expect(traceId: string, served: Served, sink: (call: KeptCall) => void): () => void {
    this.reruns.set(traceId, { sink, served });
    return () => {
      this.reruns.delete(traceId);
      this.pending.delete(traceId);
    };
  }

  /** ProxyObserver: the call found its proxy and whose permissions detokenize. */
  readonly proxy = {
    began: (
      call: ProxyCall,
      proxy: ProxyRecord,
      caller: Caller | CallContext | undefined,
      headers: Record<string, string>,
    ): void => {
      const pending = this.open(call.traceId, 'proxy', proxy, caller && 'caller' in caller ? caller.caller : caller);
      if (!pending) return;
      this.opened.set(call, pending);
      pending.inbound = {
        method: call.method,
        path: call.suffix,
        query: call.query,
        headers: { ...headers },
        // The first 64 KB, a copy: the call's own body (a 4.5 MB upload) is not held while its answer streams.
        body: call.body && call.body.length > 0 ? call.body.toString('utf8', 0, KEPT_BODY_BYTES) : undefined,
        ...(call.body && call.body.length > KEPT_BODY_BYTES && { bodyCut: true as const }),
      };
      if (caller && 'secrets' in caller) pending.sources = { ...pending.sources, secrets: caller.secrets };
    },
    transformed: (traceId: string, kind: 'request' | 'response', value: { body?: unknown }): void => {
      const { body } = value;
      // A body over what is kept is held as its first 64 KB (kept so: the stage shows it cut).
      const cut =
        (typeof body === 'string' || Buffer.isBuffer(body)) && body.length > KEPT_BODY_BYTES
          ? {
              ...value,
              body:
                typeof body === 'string'
                  ? body.slice(0, KEPT_BODY_BYTES)
                  : Buffer.from((body as Buffer).subarray(0, KEPT_BODY_BYTES)),
            }
          : value;
      this.pending.get(traceId)?.seen.set(`${kind}_transformed`, cut);
    },
  };

  /** ReactorObserver: a synchronous reactor call, from its args to its end. */
  readonly reactor = {
    began: (traceId: string, ctx: CallContext, reactor: ReactorRecord, args: unknown): void => {
      const pending = this.open(traceId, 'reactor', reactor, ctx.caller);
      if (!pending) return;
      pending.args = args;
      pending.sources = { ...pending.sources, secrets: ctx.secrets };
    },
    returned: (traceId: string, value: unknown): void => {
      this.pending.get(traceId)?.seen.set('result', value);
    },
    ended: (traceId: string, error?: unknown): void => {
      const pending = this.pending.get(traceId);
      if (pending) this.end(pending, undefined, error);
    },
  };

  /** The pipeline's answer (or error) of a proxy call (`answer` made only for a call being collected). */
  proxyEnded(call: ProxyCall, answer: (() => RawAnswer) | undefined, error?: unknown): void {
    const pending = this.opened.get(call);
    if (!pending) return;
    this.opened.delete(call);
    this.end(pending, answer?.(), error);
  }

  private end(pending: PendingCall, answer: RawAnswer | undefined, error?: unknown): void {
    if (pending.done) return;
    if (error !== undefined) pending.seen.set('error', error);
    else if (answer) pending.seen.set('answer', answer);
    pending.ended = true;
    this.settle(pending);
    if (!pending.done) setTimeout(() => this.finish(pending), BODY_GRACE_MS).unref();
  }

  /** Whether a call with this trace id is being collected (a re-run's or a kept one's). */
  collecting(traceId: string): boolean {
    return this.pending.has(traceId);
  }

  /** For the outbound gateway: each exchange of a call being collected, and a re-run's answered from what was kept. */
  readonly interceptor: OutboundInterceptor = (request, origin, next) => {
    const pending = this.pending.get(origin.traceId);
    if (!pending || pending.tenantId !== origin.tenantId) return next(request);
    // The set the call's detokenization filled (the leak guard's, when it watches the call).
    if (origin.secrets && origin.secrets !== pending.sources.secrets)
      pending.sources = { ...pending.sources, secrets: origin.secrets };
    // The code's configuration values (a proxy's forward carries them): masked as a recording masks them.
    if (origin.configuration && origin.configuration !== pending.sources.configuration)
      pending.sources = { ...pending.sources, configuration: origin.configuration };
    return exchangeOf(pending, request, origin, next, () => this.settle(pending));
  };

  /** For the event hub: a call's console lines. */
  readonly onEvent = (event: EmulatorEvent): void => {
    if (event.type !== 'console' || event.requestId === undefined) return;
    const pending = this.pending.get(event.requestId);
    if (!pending || pending.tenantId !== event.tenantId) return;
    if (pending.console.length < KEPT_CONSOLE_LINES) pending.console.push(`${event.level}: ${event.text}`);
    else pending.droppedLines += 1;
  };

  private open(
    traceId: string,
    kind: 'proxy' | 'reactor',
    record: ProxyRecord | ReactorRecord,
    caller: { application: { id: string } } | undefined,
  ): PendingCall | undefined {
    const other = this.pending.get(traceId);
    if (other) {
      // Two calls under way with one trace id (callers choose theirs): neither is kept, as what
      // each saw cannot be told apart.
      other.conflicted = true;
      return undefined;
    }
    const rerun = this.reruns.get(traceId);
    const pending: PendingCall = {
      kind,
      traceId,
      tenantId: record.tenant_id,
      id: record.id,
      name: record.name,
      time: new Date().toISOString(),
      applicationId: caller?.application.id,
      seen: new Map(),
      exchanges: [],
      droppedExchanges: 0,
      console: [],
      droppedLines: 0,
      sources: this.allowCards && this.allowCards.size > 0 ? { allowCards: this.allowCards } : {},
      open: 0,
      ended: false,
      done: false,
      sink: rerun ? rerun.sink : this.keep,
      ...(rerun && { served: rerun.served }),
    };
    this.pending.set(traceId, pending);
    return pending;
  }

  private settle(pending: PendingCall): void {
    if (pending.ended && pending.open <= 0) this.finish(pending);
  }

  private finish(pending: PendingCall): void {
    if (pending.done) return;
    pending.done = true;
    if (this.pending.get(pending.traceId) === pending) this.pending.delete(pending.traceId);
    if (pending.conflicted) return;
    // A call is redacted and weighed after its answer has gone (keeping it is not the caller's wait);
    // a re-run's is collected at once, as svc replay waits for it.
    if (pending.sink === this.keep) setImmediate(() => this.keepCall(pending));
    else this.keepCall(pending);
  }

  private keepCall(pending: PendingCall): void {
    let call: KeptCall;
    try {
      call = buildCall(pending);
    } catch (error) {
      // What cannot be kept is not: a call is never failed by its capture, but the loss is said.
      this.unkept(pending.traceId, error);
      return;
    }
    pending.sink(call);
  }
}
