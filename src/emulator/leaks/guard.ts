import type { EmulatorEventInit, LeakEventForm, LeakPlace } from '../../api/events.js';
import { HttpError } from '../errors.js';
import type { EmitEvent } from '../events.js';
import { OwnerSecrets } from './owners.js';
import { headerText, leakProblem } from './problem.js';
import { CallSecrets, maskCards, scanCards } from './secrets.js';

export type LeakMode = 'warn' | 'fail' | 'off';
export type { LeakPlace } from '../../api/events.js';
export { headerText, leakProblem } from './problem.js';

/** One call the guard watches: who runs, and the plaintext it detokenized. */
export interface LeakCall {
  tenantId: string;
  kind: 'reactor' | 'proxy' | 'transform';
  id: string;
  name: string;
  /** The caller's trace id (SVC-TRACE-ID, or one made for it): what leak events name. */
  traceId: string;
  /**
   * The server's own id of the call (never the caller's trace id, which two calls may share): what
   * the guard watches it by, and what its code's console lines and requests carry from the sandbox.
   */
  watchId: string;
  secrets: CallSecrets;
  /** A proxy's destination origin: its transforms may send the plaintext there. */
  destination?: string | undefined;
  /** The configuration values of the code it runs (recordings mask them in its code's requests). */
  configuration?: readonly string[] | undefined;
  /** What the guard refused during the call (fail mode): its answer, whatever the code made of the refusal. */
  refused?: HttpError | undefined;
}

/** What was found: a token's value in a form, or a card number from no token. */
export interface Finding {
  tokenId?: string | undefined;
  form: LeakEventForm;
  last4?: string | undefined;
}

/** How many ended calls are kept (their console lines may arrive just after the answer), and how long. */
const RECENT_CALLS = 512;
const RECENT_MS = 30_000;

/** The text members of events the guard redacts. */
const TEXT_FIELDS = ['text', 'message', 'stack', 'error', 'reason', 'path', 'url'] as const;

interface Watched {
  call: LeakCall;
  /** Leak events already told of this call (one per place, token and form). */
  told: Set<string>;
  /** When it ended (0: running). */
  ended: number;
}

/** The code an event comes from, while it is published (fromCode): its id, and its call's watch id. */
interface CodeScope {
  codeId: string | undefined;
  watchId: string | undefined;
}

/**
 * The leak guard: which calls run with which plaintext (by the server's watch id), what each code
 * version was revealed (owners.ts: kept while it lives), and the checks of every place their output
 * goes. Calls are watched and events redacted in every mode (off too: logs, events and recordings
 * never hold a call's plaintext); an answer, an error answered, an outbound request is let through
 * with a `leak` event (warn) or refused with a leak problem (fail), as the mode says, and neither is
 * checked (nor any leak event told) when off. Card numbers from no token are found on the same places.
 */
export class LeakGuard {
  readonly allow: ReadonlySet<string>;
  /** Hosts a call's plaintext may be sent to by its code (exact, or `*.example.com`: any below it). */
  readonly allowHosts: readonly string[];
  /** What each code version was revealed, by code id and version. */
  readonly owners = new OwnerSecrets();
  private readonly calls = new Map<string, Watched>();
  private readonly recent = new Map<string, Watched>();
  /** The calls under each caller's trace id (an event that names only that: a request's). */
  private readonly byTrace = new Map<string, Set<Watched>>();
  private scope: CodeScope | undefined;

  constructor(
    readonly mode: LeakMode,
    allow: Iterable<string>,
    /** Where leak events go (the hub's own publish: they need no redaction). */
    private readonly publish: EmitEvent,
    allowHosts: Iterable<string> = [],
  ) {
    this.allow = new Set([...allow].map((card) => card.replace(/[ -]/g, '')));
    this.allowHosts = [...allowHosts].map((host) => host.toLowerCase());
  }

  /** Whether answers and outbound requests are checked and leak events told (not `off`). */
  get on(): boolean {
    return this.mode !== 'off';
  }

  /** Whether a call's code may send its plaintext to `url`'s host (a declared payment provider). */
  allowsHost(url: URL): boolean {
    if (this.allowHosts.length === 0) return false;
    const host = url.hostname.toLowerCase();
    return this.allowHosts.some((allowed) =>
      allowed.startsWith('*.') ? host.endsWith(allowed.slice(1)) : allowed === host || allowed === url.host,
    );
  }

  /** Watches `call` from now, by its watch id. */
  open(call: LeakCall): void {
    const watched: Watched = { call, told: new Set(), ended: 0 };
    this.calls.set(call.watchId, watched);
    let under = this.byTrace.get(call.traceId);
    if (!under) this.byTrace.set(call.traceId, (under = new Set()));
    under.add(watched);
  }

  /** The call ended: kept a while (bounded) for the lines that arrive after its answer. */
  close(call: LeakCall): void {
    const watched = this.calls.get(call.watchId);
    if (!watched || watched.call !== call) return;
    this.calls.delete(call.watchId);
    watched.ended = Date.now();
    this.recent.set(call.watchId, watched);
    while (this.recent.size > RECENT_CALLS) this.drop(this.recent.keys().next().value as string);
  }

  /**
   * What `call` is revealed is kept for its code version too (the reactor's, or each of a proxy's
   * transforms'): printed later by another call or a timer, or returned by a call that revealed
   * nothing, it is still found, until the runtime retires the version (forget).
   */
  own(call: LeakCall, codeId: string, version: string | number): void {
    call.secrets.share(this.owners.of(codeId, version));
  }

  /** A code version is gone (retired, unloaded): what it was revealed is no longer looked for in its name. */
  forget(codeId: string, version: string | number): void {
    this.owners.forget(codeId, version);
  }

  /** The call running (or just ended) under its watch id. */
  callOf(watchId: string | undefined): LeakCall | undefined {
    return watchId === undefined ? undefined : this.watched(watchId)?.call;
  }

  /**
   * What a code's output is redacted by: its call's plaintext (with its version's), or with no call
   * (a top-level timer) what every live version of the code was revealed.
   */
  secretsOf(codeId: string | undefined, watchId: string | undefined): CallSecrets | undefined {
    const call = this.callOf(watchId);
    const owned = this.owners.ofCode(codeId);
    if (owned.length === 0) return call?.secrets;
    return CallSecrets.union(call ? [call.secrets, ...owned] : owned);
  }

  /** Publishes (through `emit`) what code printed or raised: its events redacted by secretsOf(codeId, watchId). */
  fromCode(codeId: string | undefined, watchId: string | undefined, emit: () => void): void {
    const outer = this.scope;
    this.scope = { codeId, watchId };
    try {
      emit();
    } finally {
      this.scope = outer;
    }
  }

  private watched(watchId: string): Watched | undefined {
    const running = this.calls.get(watchId);
    if (running) return running;
    const ended = this.recent.get(watchId);
    if (ended && Date.now() - ended.ended > RECENT_MS) {
      this.drop(watchId);
      return undefined;
    }
    return ended;
  }

  private drop(watchId: string): void {
    const watched = this.recent.get(watchId);
    this.recent.delete(watchId);
    const under = watched && this.byTrace.get(watched.call.traceId);
    under?.delete(watched!);
    if (under?.size === 0) this.byTrace.delete(watched!.call.traceId);
  }

  /** The calls under a caller's trace id, of `tenantId` when the event names one (never another tenant's). */
  private underTrace(traceId: string | undefined, tenantId: unknown): Watched[] {
    const under = traceId === undefined ? undefined : this.byTrace.get(traceId);
    if (!under) return [];
    const now = Date.now();
    return [...under].filter(
      (watched) =>
        (watched.ended === 0 || now - watched.ended <= RECENT_MS) &&
        (typeof tenantId !== 'string' || watched.call.tenantId === tenantId),
    );
  }

  /** What of a call's plaintext, and which card numbers, `text` holds (none found: empty). */
  findIn(secrets: CallSecrets | undefined, text: string, options?: { headers?: boolean }): Finding[] {
    const found: Finding[] = [];
    const hits = secrets ? secrets.find(text, options) : [];
    for (const hit of hits) found.push({ tokenId: hit.tokenId, form: hit.form });
    for (const card of scanCards(text, this.allow)) {
      // A token's card number is told once, as the token's.
      if (hits.some((hit) => hit.start < card.end && card.start < hit.end)) continue;
      found.push({ form: 'card', last4: card.last4 });
    }
    return found;
  }

  /** `text` with the call's plaintext replaced by `{{ token_id }}` and card numbers masked. */
  redact(secrets: CallSecrets | undefined, text: string): string {
    return maskCards(secrets && secrets.size > 0 ? secrets.redact(text) : text, this.allow);
  }

  /**
   * A place where plaintext may be meant (an answer, an outbound request): found, it is told
   * (`warned`) and let through, or in fail mode told (`refused`) and the leak problem thrown.
   * `headers` (their lines) are searched without the values that are common words (vocabulary.ts).
   */
  check(call: LeakCall, place: LeakPlace, text: string, headers?: string): void {
    if (!this.on) return;
    const found = this.findIn(call.secrets, text);
    if (headers) found.push(...this.findIn(call.secrets, headers, { headers: true }));
    if (found.length === 0) return;
    const action = this.mode === 'fail' ? 'refused' : 'warned';
    this.tell(call, place, found, action);
    if (action !== 'refused') return;
    const problem = leakProblem(call, place, found);
    call.refused ??= problem;
    throw problem;
  }

  /**
   * The end of a call: one that had something refused (fail mode) is answered with that leak
   * problem, even when its code caught the refusal (a failed request it went on without).
   */
  settle(call: LeakCall): void {
    if (call.refused) throw call.refused;
  }

  /**
   * The error a call's code failed with, as its caller would be answered: its detail checked as an
   * answer is (warn: as it is; fail: the leak problem in its place). Events redact it in any mode.
   */
  checkError(call: LeakCall | undefined, error: unknown): unknown {
    if (!this.on || !call || !(error instanceof HttpError) || error.extensions?.leaks) return error;
    // A CustomHttpResponseError is answered as the code made it: its headers and body are the answer.
    const { response } = error;
    try {
      if (response)
        this.check(call, 'error', `${error.detail}\n${JSON.stringify(response.body)}`, headerText(response.headers));
      else this.check(call, 'error', error.detail);
    } catch (refused) {
      return refused;
    }
    return error;
  }

  /** `emit` with every event's text redacted first (by its call's plaintext, and card numbers), and told. */
  redactingEvents(emit: EmitEvent): EmitEvent {
    return (event) => {
      if (event.type === 'leak') return emit(event);
      const { redacted, told } = this.redactEvent(event);
      emit(redacted);
      for (const tell of told) tell();
    };
  }

  private redactEvent(event: EmulatorEventInit): { redacted: EmulatorEventInit; told: Array<() => void> } {
    const told: Array<() => void> = [];
    const fields = event as Record<string, unknown>;
    const id = (fields.requestId ?? fields.traceId) as string | undefined;
    const { watched, secrets } = this.sourceOf(id, fields.tenantId);
    let redacted: Record<string, unknown> | undefined;
    for (const field of TEXT_FIELDS) {
      const text = fields[field];
      if (typeof text !== 'string') continue;
      const found = this.findIn(secrets, text);
      if (found.length === 0) continue;
      redacted ??= { ...fields };
      redacted[field] = this.redact(secrets, text);
      const place: LeakPlace =
        event.type === 'console' ? 'console' : field === 'stack' || event.type !== 'request' ? 'error' : 'log';
      const where = event.type === 'warning' || event.type === 'webhook' || event.type === 'reload' ? 'event' : place;
      told.push(() => this.tellOf(watched, id, event, where, found));
    }
    return { redacted: (redacted ?? event) as EmulatorEventInit, told };
  }

  /**
   * Whose plaintext an event is redacted of: from code (fromCode), its call's and its code's; else
   * every call under the trace id it names, of its tenant (a trace id chosen twice names two calls).
   */
  private sourceOf(id: string | undefined, tenantId: unknown): { watched?: Watched; secrets?: CallSecrets } {
    const { scope } = this;
    if (scope) {
      const watched = scope.watchId === undefined ? undefined : this.watched(scope.watchId);
      return { ...(watched && { watched }), secrets: this.secretsOf(scope.codeId, scope.watchId) };
    }
    const under = this.underTrace(id, tenantId);
    if (under.length <= 1) return under[0] ? { watched: under[0], secrets: under[0].call.secrets } : {};
    return { secrets: CallSecrets.union(under.map((watched) => watched.call.secrets)) };
  }

  private tellOf(
    watched: Watched | undefined,
    id: string | undefined,
    event: EmulatorEventInit,
    place: LeakPlace,
    found: Finding[],
  ): void {
    if (watched) return this.tell(watched.call, place, found, 'redacted');
    if (!this.on) return;
    const tenantId = (event as { tenantId?: string }).tenantId;
    for (const finding of found) {
      this.publish({
        type: 'leak',
        traceId: id ?? '',
        ...(tenantId && { tenantId }),
        place,
        ...finding,
        action: 'redacted',
      });
    }
  }

  /** Leak events for what was found in a place of `call`, each (place, token, form, action) once per call. */
  tell(call: LeakCall, place: LeakPlace, found: Finding[], action: 'redacted' | 'warned' | 'refused'): void {
    if (!this.on) return;
    const told = this.watched(call.watchId)?.told;
    for (const finding of found) {
      const key = `${place} ${finding.tokenId ?? ''} ${finding.form} ${finding.last4 ?? ''} ${action}`;
      if (told?.has(key)) continue;
      told?.add(key);
      this.publish({
        type: 'leak',
        traceId: call.traceId,
        tenantId: call.tenantId,
        kind: call.kind,
        id: call.id,
        name: call.name,
        place,
        ...(finding.tokenId !== undefined && { tokenId: finding.tokenId }),
        form: finding.form,
        ...(finding.last4 !== undefined && { last4: finding.last4 }),
        action,
      });
    }
  }
}
