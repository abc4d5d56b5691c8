import type { Readable } from 'node:stream';
import type { UserTlsOptions } from '../../lib/tls-options.js';
import type { CallSecrets } from '../leaks/secrets.js';

/** The TLS options of a request of user code (lib/tls-options.ts). */
export type OutboundTls = UserTlsOptions;

/** One request leaving the emulator for a destination: a proxy's forward, or an `https` request of user code. */
export interface OutboundRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  /** Whole, or (user code writing its body over time) a stream of it. */
  body: Buffer | string | Readable | undefined;
  /** SVC-PROXY-KEEP-ALIVE / SVC-PROXY-CONNECTION values for this one call (Enterprise). */
  keepAlive?: string | undefined;
  connection?: string | undefined;
  /** User code's requests carry theirs: they go out as Node's `https.request` would send them. */
  tls?: OutboundTls | undefined;
  /** Gives the request up (user code's call ended, its code was deleted). */
  signal?: AbortSignal | undefined;
}

/** The destination's answer (or an interceptor's in its place): the body streams. */
export interface OutboundResponse {
  status: number;
  /** The reason phrase, when the destination sent one. */
  statusMessage?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

/** Who sends a request: a proxy's call, or the code of a reactor or a transform (and which call). */
export interface OutboundOrigin {
  tenantId: string;
  kind: 'proxy' | 'reactor' | 'transform';
  /** The proxy's, reactor's or transform's id. */
  id: string;
  /** How events and problems name it ("reactor charge", the proxy's name). */
  name: string;
  /** The trace id of the call the request belongs to ('' for work of no call: top-level code). */
  traceId: string;
  /** User code's: the server's id of its call (the leak guard's watch id; '' for work of no call). */
  watchId?: string | undefined;
  /**
   * The plaintext the call detokenized (a proxy's forward, user code's https during a call), so that
   * interceptors redact by provenance (the leak guard, the recorder); none for work of no call.
   */
  secrets?: CallSecrets | undefined;
  /** The code's configuration values (a proxy's, a reactor's): masked in recordings. */
  configuration?: readonly string[] | undefined;
}

/** The rest of the chain after an interceptor: the next one, and at its end the network. */
export type OutboundNext = (request: OutboundRequest) => Promise<OutboundResponse>;

/**
 * A hook on every outbound exchange. It may answer in the network's place (a mock: never calling
 * `next`), refuse (throw an HttpError: the proxy answers it as its own error, user code's request
 * fails with its detail), change the request, or observe the request and the answer (calling
 * `next` and looking at what comes back; an answer's body is a stream it must pass on, not consume).
 */
export type OutboundInterceptor = (
  request: OutboundRequest,
  origin: OutboundOrigin,
  next: OutboundNext,
) => Promise<OutboundResponse>;
