import type { EmulatorEventInit, LeakEventForm, LeakPlace } from '../../api/events.js';
import { PROBLEM_TYPES } from '../../api/problem.js';
import { HttpError } from '../errors.js';
import type { EmitEvent } from '../events.js';
import { CallSecrets, maskCards, scanCards } from './secrets.js';

export type LeakMode = 'warn' | 'fail' | 'off';
export type { LeakPlace } from '../../api/events.js';

/** One call the guard watches: who runs, and the plaintext it detokenized. */
export interface LeakCall {
  tenantId: string;
  kind: 'reactor' | 'proxy' | 'transform';
  id: string;
  name: string;
  traceId: string;
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

/**
 * The leak guard: which calls run with which plaintext (by trace id and request id), and the checks
 * of every place their output goes. Calls are watched and events redacted in every mode (off too:
 * logs, events and recordings never hold a call's plaintext); an answer, an error answered, an
 * outbound request is let through with a `leak` event (warn) or refused with a leak problem (fail),
 * as the mode says, and neither is checked (nor any leak event told) when off. Card numbers from no
 * token are found on the same places.
 */
export class LeakGuard {
  readonly allow: ReadonlySet<string>;
  /** Hosts a call's plaintext may be sent to by its code (exact, or `*.example.com`: any below it). */
  readonly allowHosts: readonly string[];
  private readonly calls = new Map<string, Watched>();
  private readonly recent = new Map<string, Watched>();

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

  /** Watches `call` from now, found by its trace id and each of `ids` (an asynchronous run's request id). */
  open(call: LeakCall, ...ids: string[]): void {
    const watched: Watched = { call, told: new Set(), ended: 0 };
    this.calls.set(call.traceId, watched);
    for (const id of ids) this.calls.set(id, watched);
  }

  /** The call ended: kept a while (bounded) for the lines that arrive after its answer. */
  close(call: LeakCall, ...ids: string[]): void {
    const now = Date.now();
    for (const id of [call.traceId, ...ids]) {
      const watched = this.calls.get(id);
      if (!watched || watched.call !== call) continue;
      this.calls.delete(id);
      watched.ended = now;
      this.recent.delete(id);
      this.recent.set(id, watched);
    }
    while (this.recent.size > RECENT_CALLS) this.recent.delete(this.recent.keys().next().value as string);
  }

  /** The call running (or just ended) under `id`. */
  callOf(id: string | undefined): LeakCall | undefined {
    return id === undefined ? undefined : this.watched(id)?.call;
  }

  private watched(id: string): Watched | undefined {
    const running = this.calls.get(id);
    if (running) return running;
    const ended = this.recent.get(id);
    if (ended && Date.now() - ended.ended > RECENT_MS) {
      this.recent.delete(id);
      return undefined;
    }
    return ended;
  }

  /** What of a call's plaintext, and which card numbers, `text` holds (none found: empty). */
  findIn(secrets: CallSecrets | undefined, text: string): Finding[] {
    const found: Finding[] = [];
    const hits = secrets ? secrets.find(text) : [];
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
   */
  check(call: LeakCall, place: LeakPlace, text: string): void {
    if (!this.on) return;
    const found = this.findIn(call.secrets, text);
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
    const text = response
      ? `${error.detail}\n${headerText(response.headers)}\n${JSON.stringify(response.body)}`
      : error.detail;
    try {
      this.check(call, 'error', text);
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
    const watched = id === undefined ? undefined : this.watched(id);
    const secrets = watched?.call.secrets;
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
    const told = this.watched(call.traceId)?.told;
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

/** The answer of a call refused in fail mode: what was found where, never the value. */
export function leakProblem(call: LeakCall, place: LeakPlace, found: Finding[]): HttpError {
  const what = found
    .map((finding) =>
      finding.tokenId !== undefined
        ? `token ${finding.tokenId} (${finding.form})`
        : `a card number ending ${finding.last4} from no token`,
    )
    .filter((text, at, all) => all.indexOf(text) === at)
    .join(', ');
  const who = call.kind === 'reactor' ? `Reactor ${call.name}` : `Proxy ${call.name}`;
  return new HttpError(
    500,
    `${who}: ${PLACE_WORDS[place]} held the plaintext of ${what}; refused by the leak guard (fail mode).`,
    {
      title: 'Plaintext leak',
      type: PROBLEM_TYPES.leak,
      extensions: {
        leaks: found.map((finding) => ({
          place,
          form: finding.form,
          ...(finding.tokenId !== undefined && { token_id: finding.tokenId }),
          ...(finding.last4 !== undefined && { last4: finding.last4 }),
        })),
      },
    },
  );
}

const PLACE_WORDS: Record<LeakPlace, string> = {
  console: 'a console line',
  log: 'the log',
  event: 'an event',
  error: 'the error it failed with',
  raw: 'the raw result',
  answer: 'the answer to its caller',
  outbound: "its code's request to another host",
  recording: 'a recording',
};

/** A call's set, made empty for a call that detokenizes nothing (a proxy's anonymous caller with no Application). */
export function emptySecrets(): CallSecrets {
  return new CallSecrets();
}

/** Headers as the lines they are sent as (`name: value`), for a check. */
export function headerText(headers: Record<string, string | string[] | undefined>): string {
  let text = '';
  for (const name in headers) {
    const value = headers[name];
    text += `${name}: ${Array.isArray(value) ? value.join(', ') : (value ?? '')}\n`;
  }
  return text;
}
