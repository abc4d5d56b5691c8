import type { Readable } from 'node:stream';
import { BODY_LIMIT_LABEL } from '../../api/limits.js';
import { HttpError } from '../errors.js';
import { responseHeaders } from './forwarded-headers.js';
import type { OutboundResponse } from '../outbound/index.js';
import { TRANSFORM_PAYLOAD_LIMIT } from './transforms.js';

const SMALL_BODY_BYTES = 64 * 1024;

export interface ProxyAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  /** Streamed straight from the destination unless small or rewritten by a response transform. */
  body: Readable | Buffer | string | undefined;
}

/**
 * The destination's answer passed back as it is (no response transform), with `extra` headers.
 * A small answer of known length is sent in one piece. Anything else streams through as it
 * comes: an answer without a length may be an event stream that never ends.
 */
export function passedThrough(
  response: OutboundResponse,
  url: URL,
  extra: Record<string, string>,
): ProxyAnswer | Promise<ProxyAnswer> {
  const headers = { ...responseHeaders(response.headers, true), ...extra };
  const length = Number(response.headers['content-length']);
  if (Number.isInteger(length) && length <= SMALL_BODY_BYTES) {
    return readBounded(response.body, length, url, `more than the ${length} bytes its Content-Length announced`).then(
      (body) => ({ status: response.status, headers, body }),
    );
  }
  return { status: response.status, headers, body: response.body };
}

/** The destination's answer read whole as text for a response transform, within its payload limit (else a 502). */
export async function readForTransform(response: OutboundResponse, url: URL): Promise<string> {
  const tooLarge = `more than ${BODY_LIMIT_LABEL}, over the limit of a proxy with a response transform`;
  if (Number(response.headers['content-length']) > TRANSFORM_PAYLOAD_LIMIT) {
    // Announced too large: refused without reading any of it.
    response.body.destroy();
    throw answerTooLarge(url, tooLarge);
  }
  return (await readBounded(response.body, TRANSFORM_PAYLOAD_LIMIT, url, tooLarge)).toString('utf8');
}

/** A streamed answer read whole before it is sent (the leak guard's fail mode), within `limit` (else a 502). */
export function readWhole(stream: Readable, limit: number, url: URL, tooLarge: string): Promise<Buffer> {
  return readBounded(stream, limit, url, tooLarge);
}

/**
 * A destination's answer read whole, never past `limit` bytes: beyond it the read stops (the
 * connection is dropped, so memory does not grow with what the destination sends) and the call
 * is a 502, as is an answer broken off midway.
 */
function readBounded(stream: Readable, limit: number, url: URL, tooLarge: string): Promise<Buffer> {
  // Events rather than an async iterator: a small answer is most calls, and the iterator's promise
  // per chunk is most of the cost of reading one.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      stream.destroy();
      if (error instanceof HttpError) return reject(error);
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      reject(
        new HttpError(502, `The destination ${url.origin} broke off its answer: ${reason}.`, {
          title: 'Destination unreachable',
          cause: error,
        }),
      );
    };
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) fail(answerTooLarge(url, tooLarge));
      else chunks.push(chunk);
    });
    stream.once('end', () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks, size));
    });
    stream.once('error', fail);
    // Closed with neither its end nor an error: cut off. Every answer closes after its end: the error
    // (whose stack costs more than the rest of reading a small answer) is made only when it is one.
    stream.once('close', () => {
      if (!settled) fail(Object.assign(new Error('premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    });
  });
}

function answerTooLarge(url: URL, what: string): HttpError {
  return new HttpError(502, `The destination ${url.origin} answered with ${what}.`, {
    title: 'Destination answer too large',
  });
}
