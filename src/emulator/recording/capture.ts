/**
 * An exchange as it passes through the gateway, turned into what a cassette holds: bodies copied as
 * they stream (never consumed for the caller), at most 5 MB of each kept; headers without those that
 * change between runs or belong to one hop (date, content-length, trace ids), names in lower case.
 */
import type { Readable } from 'node:stream';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { HOP_BY_HOP_HEADERS, PROXY_HOP_HEADER, TRACE_HEADER } from '../../api/headers.js';
import { BODY_LIMIT_BYTES } from '../../api/limits.js';
import { megabytes } from '../../lib/megabytes.js';
import type { OutboundRequest, OutboundResponse } from '../outbound/types.js';
import type { RecordedAnswer, RecordedBody, RecordedHeaders, RecordedRequest } from './cassette.js';
import { tapHead } from '../../lib/stream-head.js';

/** How much of a body a recording keeps: over it, the exchange is recorded with its body omitted. */
export const RECORDED_BODY_LIMIT = BODY_LIMIT_BYTES;

/** Headers never recorded: one hop's framing, and what differs on every run. */
const DROPPED_HEADERS: ReadonlySet<string> = new Set([
  ...HOP_BY_HOP_HEADERS,
  'host',
  'content-length',
  'date',
  'age',
  'expires',
  'last-modified',
  'server-timing',
  'x-response-time',
  'x-runtime',
  'x-request-id',
  'request-id',
  'x-amz-request-id',
  'x-amzn-requestid',
  'x-amzn-trace-id',
  'x-cloud-trace-context',
  'cf-ray',
  'traceparent',
  'tracestate',
  'x-trace-id',
  'x-b3-traceid',
  'x-b3-spanid',
  'x-b3-parentspanid',
  'x-b3-sampled',
  PROXY_HOP_HEADER,
  TRACE_HEADER,
]);

/** A body as it was seen: its bytes (undefined over the limit), how many there were, and whether it ended. */
export interface CapturedBody {
  bytes: Buffer | undefined;
  size: number;
  complete: boolean;
}

/** `stream` passed on as it is; `done` is told what went through once it ends (or is cut off). */
export function tee(stream: Readable, done: (body: CapturedBody) => void): Readable {
  return tapHead(stream, RECORDED_BODY_LIMIT, ({ head, size, complete }) =>
    done({ bytes: size > RECORDED_BODY_LIMIT ? undefined : head, size, complete }),
  );
}

/** A whole body (given at once) as captured. */
export function capturedOf(body: Buffer | string | undefined): CapturedBody {
  const bytes = body === undefined ? Buffer.alloc(0) : typeof body === 'string' ? Buffer.from(body) : body;
  return { bytes: bytes.length > RECORDED_BODY_LIMIT ? undefined : bytes, size: bytes.length, complete: true };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

const DECODERS: Record<string, (bytes: Buffer, options: { maxOutputLength: number }) => Buffer> = {
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};

/**
 * A captured body as a cassette holds it: text, base64, or omitted with the reason. A compressed
 * body (`encoding`: its content-encoding) is kept decompressed, so that what it holds is redacted and
 * checked like any other; one that cannot be decompressed (an unknown coding, over the bound, broken)
 * is omitted: what it holds could not be checked.
 */
export function recordedBody(body: CapturedBody, encoding?: string): RecordedBody {
  if (body.size === 0) return {};
  if (body.bytes === undefined)
    return {
      bodyOmitted: `${body.size} bytes, over the ${megabytes(RECORDED_BODY_LIMIT)} a recording keeps of a body`,
    };
  let bytes = body.bytes;
  if (encoding !== undefined) {
    const decode = DECODERS[encoding];
    try {
      if (!decode) throw new Error('unknown');
      bytes = decode(bytes, { maxOutputLength: RECORDED_BODY_LIMIT });
    } catch {
      return { bodyOmitted: `a body encoded as ${encoding.slice(0, 40)} that a recording could not decode and check` };
    }
  }
  try {
    return { body: utf8.decode(bytes) };
  } catch {
    return { bodyBase64: bytes.toString('base64') };
  }
}

/** The content-encoding of `headers` that is not identity (lower case), and the headers without it. */
function withoutEncoding(headers: RecordedHeaders): { headers: RecordedHeaders; encoding: string | undefined } {
  const value = headers['content-encoding'];
  if (value === undefined) return { headers, encoding: undefined };
  const { 'content-encoding': _dropped, ...rest } = headers;
  const encoding = (Array.isArray(value) ? value.join(',') : value).trim().toLowerCase();
  return encoding === 'identity' || encoding === ''
    ? { headers: rest, encoding: undefined }
    : { headers: rest, encoding };
}

/** The bytes of a recorded body (undefined when it was omitted). */
export function bodyBytes(body: RecordedBody): Buffer | undefined {
  if (body.bodyOmitted !== undefined) return undefined;
  if (body.bodyBase64 !== undefined) return Buffer.from(body.bodyBase64, 'base64');
  return Buffer.from(body.body ?? '');
}

/** Headers as recorded: lower-case names, without the dropped ones. */
export function recordedHeaders(headers: Record<string, string | string[] | undefined>): RecordedHeaders {
  const out: RecordedHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    // `__proto__` (a hand-edited cassette's) would set the object's prototype, not a header.
    if (value === undefined || DROPPED_HEADERS.has(lower) || lower === '__proto__') continue;
    out[lower] = Array.isArray(value) ? [...value] : String(value);
  }
  return out;
}

/** A request as sent, before redaction (a compressed body decompressed, its content-encoding dropped). */
export function recordedRequest(request: OutboundRequest, body: CapturedBody): RecordedRequest {
  const { headers, encoding } = withoutEncoding(recordedHeaders(request.headers));
  return {
    method: request.method.toUpperCase(),
    path: request.url.pathname,
    query: request.url.search.replace(/^\?/, ''),
    headers,
    ...recordedBody(body, encoding),
  };
}

/** An answer as received, before redaction (a compressed body decompressed: it replays uncompressed). */
export function recordedAnswer(response: OutboundResponse, body: CapturedBody): RecordedAnswer {
  const { headers, encoding } = withoutEncoding(recordedHeaders(response.headers));
  return { status: response.status, headers, ...recordedBody(body, encoding) };
}
