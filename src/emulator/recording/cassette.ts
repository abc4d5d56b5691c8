/**
 * The cassette format: one JSON file per destination origin, holding each exchange as the request
 * was sent and the answer as received (redacted: redact.ts). Written with a fixed key order, headers
 * sorted by name and exchanges sorted by what they are matched by (then by occurrence), with nothing
 * that changes between runs, so that re-recording an unchanged run writes the same bytes. Read back
 * with every field checked: a cassette is a file anyone may have edited.
 */
import { createHash } from 'node:crypto';
import { lstat, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { megabytes } from '../../lib/megabytes.js';
import { isRecord } from '../../lib/is-record.js';

/** The version this svc writes and reads. */
export const CASSETTE_VERSION = 1;
/** A cassette larger than this is refused unread (each body is at most 5 MB; a cassette holds many). */
export const MAX_CASSETTE_BYTES = 256 * 1024 * 1024;

export type RecordedHeaders = Record<string, string | string[]>;

/** A body: text as text, other bytes as base64, or omitted (over the bound) with the reason. */
export interface RecordedBody {
  body?: string;
  bodyBase64?: string;
  bodyOmitted?: string;
}

export interface RecordedRequest extends RecordedBody {
  method: string;
  path: string;
  /** The query as sent, without its `?` ('' for none). */
  query: string;
  headers: RecordedHeaders;
}

export interface RecordedAnswer extends RecordedBody {
  status: number;
  headers: RecordedHeaders;
}

export interface RecordedExchange {
  request: RecordedRequest;
  answer: RecordedAnswer;
}

export interface Cassette {
  version: typeof CASSETTE_VERSION;
  /** `https://api.example.com` (a URL's origin). */
  origin: string;
  exchanges: RecordedExchange[];
}

/** The most of a host a file name holds (a name stays under 255 bytes). */
const MAX_HOST_IN_NAME = 200;

/** The file a destination's cassette is in: scheme, host and port, safe as a file name on every system. */
export function cassetteFileName(origin: string): string {
  const url = new URL(origin);
  const scheme = url.protocol.replace(':', '');
  const port = url.port || (scheme === 'https' ? '443' : '80');
  const hostname = url.hostname.toLowerCase();
  const host = hostname.replace(/[^a-z0-9.-]/g, '_');
  if (host === hostname && host.length <= MAX_HOST_IN_NAME) return `${scheme}_${host}_${port}.json`;
  // Cut or changed: two origins could end up in one file, so the name says which it is.
  const digest = createHash('sha256').update(url.origin).digest('hex').slice(0, 12);
  return `${scheme}_${host.slice(0, MAX_HOST_IN_NAME)}_${digest}_${port}.json`;
}

/** The cassette as written: fixed key order, two-space indent, a final newline. */
export function serializeCassette(cassette: Cassette): string {
  const parts = cassette.exchanges.map(exchangePart);
  return cassetteHead(cassette.origin, parts.length) + parts.join(PART_SEPARATOR) + cassetteTail(parts.length);
}

/** The text of a cassette before its exchanges (as JSON.stringify with a two-space indent writes it). */
export function cassetteHead(origin: string, count: number): string {
  return `{\n  "version": ${CASSETTE_VERSION},\n  "origin": ${JSON.stringify(origin)},\n  "exchanges": [${count === 0 ? '' : '\n    '}`;
}

/** What stands between two exchanges of a cassette, and what follows the last. */
export const PART_SEPARATOR = ',\n    ';
export function cassetteTail(count: number): string {
  return `${count === 0 ? '' : '\n  '}]\n}\n`;
}

/** One exchange as a cassette writes it (at its indent inside `exchanges`; JSON strings hold no newline). */
export function exchangePart({ request, answer }: RecordedExchange): string {
  const ordered = {
    request: {
      method: request.method,
      path: request.path,
      query: request.query,
      headers: sortedHeaders(request.headers),
      ...bodyFields(request),
    },
    answer: { status: answer.status, headers: sortedHeaders(answer.headers), ...bodyFields(answer) },
  };
  return JSON.stringify(ordered, null, 2).replaceAll('\n', '\n    ');
}

function sortedHeaders(headers: RecordedHeaders): RecordedHeaders {
  const sorted: RecordedHeaders = {};
  for (const name of Object.keys(headers).sort()) sorted[name] = headers[name] as string | string[];
  return sorted;
}

function bodyFields(body: RecordedBody): RecordedBody {
  return {
    ...(body.body !== undefined && { body: body.body }),
    ...(body.bodyBase64 !== undefined && { bodyBase64: body.bodyBase64 }),
    ...(body.bodyOmitted !== undefined && { bodyOmitted: body.bodyOmitted }),
  };
}

/** A cassette that cannot be used, said in one line naming its file. */
export class CassetteError extends Error {
  override readonly name = 'CassetteError';
}

/**
 * Reads and checks the cassette in `file`; a CassetteError says what is wrong with it, never what
 * the file holds (a link to `/proc/self/environ` or a key file must not put its first characters in an
 * error). A link is followed only to a file within the cassette's own folder.
 */
export async function readCassette(file: string): Promise<Cassette> {
  let real = file;
  if ((await lstat(file)).isSymbolicLink()) {
    real = await realpath(file);
    const within = path.relative(await realpath(path.dirname(file)), real);
    if (within === '' || within.startsWith('..') || path.isAbsolute(within))
      throw new CassetteError(`${file} is a link to a file out of the folder: not read.`);
  }
  const stats = await stat(real);
  // A device, a pipe or a folder named x.json (or a link to one) would be read without end, or hang.
  if (!stats.isFile()) throw new CassetteError(`${file} is not a file: not read.`);
  const size = stats.size;
  if (size > MAX_CASSETTE_BYTES)
    throw new CassetteError(
      `${file} is ${megabytes(size)}, over the ${megabytes(MAX_CASSETTE_BYTES)} a cassette may be: not read.`,
    );
  return parseCassette(await readFile(real, 'utf8'), file);
}

/** Parses and checks a cassette's text (`file` names it in errors). */
export function parseCassette(text: string, file: string): Cassette {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    // Where, never what: the parser's message quotes the text.
    const message = (error as Error).message;
    const at = /position (\d+)/.exec(message)?.[1];
    const where = /end of JSON/.test(message) ? ' (it ends early)' : at === undefined ? '' : ` (at character ${at})`;
    throw new CassetteError(`${file} is not JSON${where}.`);
  }
  const bad = (what: string) => new CassetteError(`${file} is not a cassette: ${what}.`);
  if (!isRecord(data)) throw bad('it is not a JSON object');
  if (data.version !== CASSETTE_VERSION)
    throw new CassetteError(
      `${file} is a cassette of version ${typeof data.version === 'number' ? data.version : 'none'}; this svc reads version ${CASSETTE_VERSION}.`,
    );
  if (typeof data.origin !== 'string' || !isOrigin(data.origin)) throw bad('"origin" is not an http(s) origin');
  if (!Array.isArray(data.exchanges)) throw bad('"exchanges" is not a list');
  const exchanges = data.exchanges.map((exchange: unknown, at: number) => {
    const problem = exchangeProblem(exchange);
    if (problem !== undefined) throw bad(`exchanges[${at}]${problem}`);
    return exchange as RecordedExchange;
  });
  return { version: CASSETTE_VERSION, origin: data.origin, exchanges };
}

function isOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === text;
  } catch {
    return false;
  }
}

/** What is wrong with an exchange (` .request.method is not text`), or undefined. */
function exchangeProblem(exchange: unknown): string | undefined {
  if (!isRecord(exchange)) return ' is not an object';
  const { request, answer } = exchange;
  if (!isRecord(request)) return '.request is not an object';
  if (!isRecord(answer)) return '.answer is not an object';
  for (const field of ['method', 'path', 'query'] as const)
    if (typeof request[field] !== 'string') return `.request.${field} is not text`;
  if (!(request.path as string).startsWith('/')) return '.request.path does not start with /';
  const status = answer.status;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599)
    return '.answer.status is not an HTTP status';
  // An interim answer written as the final one: the caller would read the next request's answer as this one's.
  if (status < 200) return `.answer.status ${status} is an interim status, not an answer`;
  for (const [side, message] of [
    ['request', request],
    ['answer', answer],
  ] as const) {
    if (!headersOk(message.headers)) return `.${side}.headers is not an object of text values`;
    if (side === 'answer') {
      const problem = answerHeadersProblem(message.headers as RecordedHeaders);
      if (problem !== undefined) return `.answer.headers${problem}`;
    }
    for (const field of ['body', 'bodyBase64', 'bodyOmitted'] as const)
      if (message[field] !== undefined && typeof message[field] !== 'string') return `.${side}.${field} is not text`;
  }
  return undefined;
}

function headersOk(headers: unknown): boolean {
  if (!isRecord(headers)) return false;
  return Object.values(headers).every(
    (value) => typeof value === 'string' || (Array.isArray(value) && value.every((item) => typeof item === 'string')),
  );
}

/** A header name (RFC 9110 token), and what a value may hold: tab, visible ASCII, Latin-1 (no CR, LF or NUL). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** What of an answer's headers node:http would refuse to send (a 500 at replay), or undefined. */
function answerHeadersProblem(headers: RecordedHeaders): string | undefined {
  for (const [name, value] of Object.entries(headers)) {
    const at = `[${JSON.stringify(name)}]`;
    if (!HEADER_NAME.test(name)) return `${at} is not a header name`;
    const values = Array.isArray(value) ? value : [value];
    if (!values.every((item) => HEADER_VALUE.test(item)))
      return `${at} holds a character HTTP cannot carry (CR, LF, NUL or beyond Latin-1)`;
  }
  return undefined;
}

/** The path of `origin`'s cassette in `dir`. */
export function cassettePath(dir: string, origin: string): string {
  return path.join(dir, cassetteFileName(origin));
}
