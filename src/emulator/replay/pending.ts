/**
 * A call under way, as `svc replay` collects it: what each place of the call saw (unredacted while
 * the call runs: its set of secrets is complete only once it ends), turned into its kept form
 * (build.ts) when the call has ended and the bodies it streamed have.
 */
import type { RedactionSources } from '../recording/redact.js';
import type { CallIdentity, KeptCall, KeptExchange, KeptInbound } from './types.js';

/** How many outbound exchanges and console lines a kept call holds (the rest counted). */
export const KEPT_EXCHANGES = 20;
export const KEPT_CONSOLE_LINES = 200;

/** An outbound exchange as it passed. */
export interface RawExchange {
  kind: KeptExchange['kind'];
  method: string;
  url: string;
  headers: Record<string, string>;
  body: Buffer | string | undefined;
  bodyCut?: boolean;
  status?: number;
  answerHeaders?: Record<string, string | string[] | undefined>;
  answerBody?: Buffer;
  answerCut?: boolean;
  error?: string;
}

/** The final answer of a proxy call as the pipeline gave it back; `fromDestination`: its body streamed through. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer | string | undefined;
  fromDestination?: boolean;
}

/** How a re-run's requests are answered: the kept call's exchanges, or (live) the network. */
export interface Served {
  exchanges: readonly KeptExchange[];
  used: Set<number>;
  live: boolean;
  /**
   * A kept answer's `{{ token_id }}` expressions of `tokens` (what redaction made of the plaintext
   * the call revealed; an expression the answer held as text stays text) given their plaintext again, under the permissions that revealed it: the code sees
   * what it saw when the call was made. Each value given back is `revealed`: the re-run's own
   * plaintext, redacted in what it shows and watched by the leak guard.
   */
  restore: (text: string, tokens: readonly string[], revealed: (value: string, tokenId: string) => void) => string;
}

export interface PendingCall extends CallIdentity {
  kind: 'proxy' | 'reactor';
  inbound?: KeptInbound;
  args?: unknown;
  /** What the stages passed by name: request_transformed, response_transformed, answer, result, error. */
  seen: Map<string, unknown>;
  exchanges: RawExchange[];
  droppedExchanges: number;
  console: string[];
  droppedLines: number;
  sources: RedactionSources;
  /** Bodies still streaming (a destination's answer, user code's request). */
  open: number;
  ended: boolean;
  done: boolean;
  /** Another call took the same trace id while this one ran: not kept. */
  conflicted?: boolean;
  /** Where the call goes once kept: the store, or the re-run that waits for it. */
  sink: (call: KeptCall) => void;
  served?: Served;
}
