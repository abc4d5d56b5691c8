/**
 * The bounds of a request of user code, as both sides say them: its body (MAX_OUTBOUND_BODY_BYTES),
 * and its head: its URL and headers, and its TLS options. The emulator holds the head, several times over, for as long as the request is under way, and parses
 * each on its own thread: unbounded, a sandbox's requests to a destination that never answers would
 * fill the emulator's memory (not its own), and large ones sent in a loop would keep the emulator
 * busy for every tenant. The sandbox checks before it sends; the emulator again, as it trusts
 * nothing a sandbox sends. Servers refuse heads far smaller (16 KB in Node).
 */
import { megabytes } from '../../lib/megabytes.js';
import { MAX_OUTBOUND_BODY_BYTES } from './protocol.js';

/** The URL, method and headers (names and values); and the TLS options' strings. */
export const MAX_OUTBOUND_HEAD_BYTES = 64 * 1024;
export const MAX_OUTBOUND_TLS_BYTES = 512 * 1024;

export interface RequestHeadParts {
  url: string;
  method: string;
  headers: Record<string, string>;
  tls: Record<string, unknown>;
}

/** Why a request's head or TLS options are over their bounds (a code and words for user code), or undefined. */
export function oversizedHead(head: RequestHeadParts): { code: string; message: string } | undefined {
  let size = head.url.length + head.method.length;
  for (const [name, value] of Object.entries(head.headers)) size += name.length + value.length + 4;
  if (size > MAX_OUTBOUND_HEAD_BYTES)
    return {
      code: 'ERR_SVC_HEADERS_TOO_LARGE',
      message: `The URL and headers of the request are over ${MAX_OUTBOUND_HEAD_BYTES / 1024} KB, the most a request of the sandbox may send.`,
    };
  let tls = 0;
  for (const value of Object.values(head.tls)) tls += typeof value === 'string' ? value.length : 0;
  if (tls > MAX_OUTBOUND_TLS_BYTES)
    return {
      code: 'ERR_SVC_TLS_OPTIONS_TOO_LARGE',
      message: `The TLS options of the request (ca, cert, key...) are over ${MAX_OUTBOUND_TLS_BYTES / 1024} KB, the most a request of the sandbox may give.`,
    };
  return undefined;
}

/** A request's body over MAX_OUTBOUND_BODY_BYTES, as both sides say it. */
export function bodyTooLarge(): { code: string; message: string } {
  return {
    code: 'ERR_SVC_BODY_TOO_LARGE',
    message: `The request body is over ${megabytes(MAX_OUTBOUND_BODY_BYTES)}, the most a request of the sandbox may send.`,
  };
}
