/**
 * What `svc replay` keeps of a past call and answers of a re-run: plain JSON values, redacted
 * (redact.ts) before they are kept. A call is a list of stages in the order the call passed them;
 * a re-run makes the same list, and each stage is compared by its name (the answer: api/replay.ts).
 */

/** A message's body as kept: its first 64 KB as text, JSON parsed when it is JSON. */
export type KeptBody = unknown;

/** One stage of a call: its name (`destination_answer`, `https 1`) and what passed there. */
export interface Stage {
  stage: string;
  value: unknown;
}

/** One outbound request of a call and its answer, as kept (what a re-run is answered with). */
export interface KeptExchange {
  /** Who sent it: the proxy's forward, or the code of a reactor or a transform. */
  kind: 'proxy' | 'reactor' | 'transform';
  request: { method: string; url: string; headers: Record<string, string>; body: KeptBody };
  /** Undefined: the destination could not be reached (error says why). */
  answer?: { status: number; headers: Record<string, string | string[]>; body: KeptBody; truncated?: true };
  error?: string;
  /** The answer's body as text (JSON unparsed), served to a re-run. */
  answerText?: string;
  /** The tokens whose plaintext the answer held: only their expressions are given plaintext back in a re-run. */
  answerTokens?: string[];
  /** The answer's bytes, when they are not text and hold nothing redacted: served as they came. */
  answerBase64?: string;
}

/** The inbound request of a proxy call, as its caller sent it (its expressions kept). */
export interface KeptInbound {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  /** The body as text (its `{{ }}` expressions as sent), undefined when there was none. */
  body: string | undefined;
  /** The body was over the 64 KB a call keeps: `body` is its start, and the call cannot be re-run. */
  bodyCut?: true;
}

/** Which call, under way (pending.ts) or kept. */
export interface CallIdentity {
  traceId: string;
  tenantId: string;
  /** The proxy's or reactor's id and name when it ran. */
  id: string;
  name: string;
  time: string;
  /** The Application whose permissions detokenized (the caller's, or an anonymous proxy's own). */
  applicationId: string | undefined;
}

interface KeptCallBase extends CallIdentity {
  stages: Stage[];
  exchanges: KeptExchange[];
}

export interface KeptProxyCall extends KeptCallBase {
  kind: 'proxy';
  inbound: KeptInbound;
}

export interface KeptReactorCall extends KeptCallBase {
  kind: 'reactor';
  /** The args as sent, their expressions kept. */
  args: unknown;
}

export type KeptCall = KeptProxyCall | KeptReactorCall;
