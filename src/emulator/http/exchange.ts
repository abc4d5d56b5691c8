import type { IncomingMessage, ServerResponse } from 'node:http';
import { finished, type Readable } from 'node:stream';
import { PROXY_DESTINATION_STATUS_HEADER, TRACE_HEADER } from '../../api/headers.js';
import type { EmitEvent } from '../events.js';
import type { Caller } from '../services/applications.js';
import type { ErrorAnswer, ErrorRequest } from './problems.js';
import { requestEvent, traceIdOf } from './trace.js';

export type { ErrorAnswer };

const OCTET_CONTENT_TYPE = 'application/octet-stream';

/**
 * One request and its answer: what the route reads (params, query, body, the caller) and how the
 * answer is written: headers (names in lower case, Set-Cookie values gathered), the framing of a
 * body that is absent, bytes, text or a stream (a HEAD answer keeps the length, without the body),
 * and errors answered by the one error answer, over whatever headers were set before (less the
 * framing). The trace id comes first; the request's log line (trace.ts) is emitted once the answer
 * is written.
 */
export class Exchange implements ErrorRequest {
  readonly id: string;
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  /** The tenant the request belongs to, for its log line: the caller's, or on /proxy the proxy's. */
  tenantId: string | undefined;
  /** On /proxy: how many tokens were detokenized, for its log line. */
  detokenized: number | undefined;
  /** A refusal's one-line reason (set by the error answer), for its log line. */
  reason: string | undefined;
  /** The path's parameters, decoded (router.ts). */
  params: Record<string, string> = {};
  /** The query string's values (repeated names: an array). */
  query: Record<string, unknown> = {};
  /** The body: a JSON value, bytes on /proxy, or undefined when none was sent. */
  body: unknown;
  /** The authenticated caller, on every route that is not public. */
  caller: Caller | undefined;
  private readonly started = performance.now();
  private status = 200;
  private readonly out: Record<string, string | string[]> = Object.create(null);

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    private readonly proxy: boolean,
    private readonly answerError: ErrorAnswer,
    emit: EmitEvent,
  ) {
    this.method = req.method ?? 'GET';
    this.url = req.url ?? '/';
    this.headers = req.headers;
    this.id = traceIdOf(req.headers[TRACE_HEADER]);
    this.out[TRACE_HEADER] = this.id;
    const done = () => {
      res.off('finish', done);
      res.off('error', done);
      emit(
        requestEvent(
          this.method,
          this.url,
          res.statusCode,
          performance.now() - this.started,
          this.id,
          this.tenantId,
          this.detokenized,
          this.reason,
        ),
      );
    };
    res.on('finish', done);
    res.on('error', done);
  }

  /** A header of the answer: names lower-cased; Set-Cookie values add up. */
  header(name: string, value: string | string[]): void {
    const key = name.toLowerCase();
    const current = this.out[key];
    if (key === 'set-cookie' && current !== undefined) {
      this.out[key] = [
        ...(typeof current === 'string' ? [current] : current),
        ...(Array.isArray(value) ? value : [value]),
      ];
    } else {
      this.out[key] = Array.isArray(value) ? value.slice() : value;
    }
  }

  /** A JSON answer (text with its type). */
  json(status: number, text: string): void {
    this.status = status;
    this.out['content-type'] = 'application/json; charset=utf-8';
    this.write(text);
  }

  /** An answer whose body is absent, bytes (application/octet-stream unless typed) or a stream. */
  send(status: number, body: Buffer | Readable | undefined): void {
    this.status = status;
    if (Buffer.isBuffer(body)) this.out['content-type'] ??= OCTET_CONTENT_TYPE;
    if (body === undefined || Buffer.isBuffer(body)) this.write(body);
    else this.stream(body);
  }

  /** The headers set so far, for an answer written by the route itself (the event stream). */
  headersSoFar(): Record<string, string | string[]> {
    return { ...this.out };
  }

  /** An error, answered by the one error answer (problem+json, or a proxy_error on a proxy call). */
  fail(error: unknown): void {
    if (this.res.headersSent || this.res.destroyed) {
      // Nothing can be answered any more: the answer under way is cut.
      this.res.destroy();
      return;
    }
    delete this.out['content-type'];
    delete this.out['content-length'];
    if (this.proxy) {
      delete this.out[PROXY_DESTINATION_STATUS_HEADER];
      this.res.removeHeader(PROXY_DESTINATION_STATUS_HEADER);
    }
    const answer = this.answerError(error, this, this.proxy);
    for (const [name, value] of Object.entries(answer.headers)) this.header(name, value);
    this.status = answer.status;
    try {
      this.write(answer.body);
    } catch (failure) {
      // A header set before that Node will not write (the error may be that very header): the
      // problem alone, with the trace id, rather than an exception out of the request's handler.
      this.answerWithoutHeaders(failure);
    }
  }

  /** The error answer with none of the headers set before it but the trace id (see fail). */
  private answerWithoutHeaders(failure: unknown): void {
    for (const name of Object.keys(this.out)) if (name !== TRACE_HEADER) delete this.out[name];
    for (const name of this.res.getHeaderNames()) this.res.removeHeader(name);
    const problem = this.answerError(failure, this, this.proxy);
    for (const [name, value] of Object.entries(problem.headers)) this.header(name, value);
    this.status = problem.status;
    try {
      this.write(problem.body);
    } catch {
      this.res.destroy();
    }
  }

  /** A body in one piece. */
  private write(body: Buffer | string | undefined): void {
    const { res, status, out } = this;
    if (body === undefined) {
      if (status >= 200 && status !== 204 && status !== 304 && this.method !== 'HEAD') out['content-length'] = '0';
      res.writeHead(status, out);
      res.end();
      return;
    }
    if ((status >= 100 && status < 200) || status === 204) {
      // No body on these: no type or length either.
      delete out['content-type'];
      delete out['content-length'];
      res.writeHead(status, out);
      res.end();
      return;
    }
    const length = Buffer.byteLength(body);
    if (out['content-length'] === undefined || (this.method !== 'HEAD' && Number(out['content-length']) !== length)) {
      out['content-length'] = String(length);
    }
    res.writeHead(status, out);
    res.end(body);
  }

  /** A body that streams through: an error before its first bytes is answered, after them the answer is cut. */
  private stream(body: Readable): void {
    const { res, status, out } = this;
    if ((status >= 100 && status < 200) || status === 204) {
      delete out['content-type'];
      delete out['content-length'];
      res.writeHead(status, out);
      res.end();
      body.on('error', () => {});
      body.resume();
      return;
    }
    let open = true;
    finished(body, { readable: true, writable: false }, (error) => {
      open = false;
      if (!error) return;
      if (res.headersSent || this.req.destroyed) res.destroy();
      else this.fail(error);
    });
    finished(res, () => {
      if (open) body.destroy();
    });
    res.statusCode = status;
    for (const [name, value] of Object.entries(out)) res.setHeader(name, value);
    body.pipe(res);
  }
}
