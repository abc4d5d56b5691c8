import type { IncomingHttpHeaders } from 'node:http';
import { parse as secureJsonParse } from 'secure-json-parse';
import { JSON_CONTENT_TYPE, MERGE_PATCH_CONTENT_TYPE } from '../../api/headers.js';
import { MAX_DEPTH, exceedsDepth } from '../../lib/json-depth.js';
import { MAX_JSON_KEYS, exceedsKeys } from '../../lib/json-keys.js';
import { HttpError } from '../errors.js';

/** Fatal: a byte sequence that is not UTF-8 is refused rather than turned into U+FFFD (data changed silently). */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const UTF8_CHARSETS = new Set(['utf-8', 'utf8']);

/** The media type (lower-cased, without parameters) and charset of a Content-Type header. */
export function parseContentType(header: string | undefined): { type: string; charset: string | undefined } {
  const [type = '', ...parameters] = (header ?? '').split(';');
  let charset: string | undefined;
  for (const parameter of parameters) {
    const at = parameter.indexOf('=');
    if (at < 0 || parameter.slice(0, at).trim().toLowerCase() !== 'charset') continue;
    charset = parameter
      .slice(at + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
  }
  return { type: type.trim().toLowerCase(), charset };
}

type Done = (error: Error | null, body?: unknown) => void;
/** A JSON body's bytes to its value, for a request with these headers. */
export type JsonBody = (request: { headers: IncomingHttpHeaders }, raw: Buffer, done: Done) => void;

/** The errors of a JSON body that cannot be parsed (by code), which problems.ts words for the caller. */
function parseError(code: 'FST_ERR_CTP_EMPTY_JSON_BODY' | 'FST_ERR_CTP_INVALID_JSON_BODY'): Error {
  const message =
    code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
      ? "Body cannot be empty when content-type is set to 'application/json'"
      : "Body is not valid JSON but content-type is set to 'application/json'";
  return Object.assign(new Error(message), { code, statusCode: 400 });
}

function unsuspect(text: string): boolean {
  return (
    text.charCodeAt(0) !== 0xfeff &&
    !text.includes('\\') &&
    !text.includes('__proto__') &&
    !text.includes('constructor')
  );
}

/** JSON text to its value, secure-json-parse refusing `__proto__` and `constructor.prototype`. */
function parseJson(text: string, done: Done): void {
  if (text.length === 0) {
    done(parseError('FST_ERR_CTP_EMPTY_JSON_BODY'));
    return;
  }
  let value: unknown;
  try {
    // Without a backslash (an escape could spell either key), `__proto__` or `constructor`, the
    // text holds neither key: secure-json-parse would find nothing, after two scans of it.
    value = unsuspect(text)
      ? JSON.parse(text)
      : secureJsonParse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    done(parseError('FST_ERR_CTP_INVALID_JSON_BODY'));
    return;
  }
  done(null, value);
}

/**
 * The one way a JSON body becomes a value: uncompressed UTF-8 only (a declared charset other than
 * UTF-8 or a Content-Encoding is a 415, bytes that are not UTF-8 a 400), parsed with prototype-poisoning guards,
 * and nesting bounded (every later walk over the value, and JSON.stringify, recurse).
 */
export const jsonBody: JsonBody = (request, raw, done) => {
  const encoding = request.headers['content-encoding']?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
    done(new HttpError(415, `Content-Encoding ${encoding} is not accepted: send the JSON body uncompressed.`));
    return;
  }
  const header = request.headers['content-type'];
  // The usual header has no parameters: no charset to look for.
  const { type, charset } =
    header === JSON_CONTENT_TYPE ? { type: header, charset: undefined } : parseContentType(header);
  if (charset !== undefined && !UTF8_CHARSETS.has(charset)) {
    done(
      new HttpError(
        415,
        `Content-Type ${type}; charset=${charset} is not accepted: JSON bodies are UTF-8 (send charset=utf-8 or no charset).`,
      ),
    );
    return;
  }
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    done(
      new HttpError(400, 'The body is not valid UTF-8: JSON bodies must be UTF-8 text.', { title: 'Malformed JSON' }),
    );
    return;
  }
  if (exceedsKeys(text)) {
    done(
      new HttpError(
        413,
        `The JSON body holds more than ${MAX_JSON_KEYS.toLocaleString('en-US')} distinct object keys.`,
      ),
    );
    return;
  }
  parseJson(text, (error, value) => {
    if (error) done(error);
    else if (exceedsDepth(value, MAX_DEPTH))
      done(new HttpError(400, `The JSON is nested deeper than ${MAX_DEPTH} levels.`));
    else done(null, value);
  });
};

/** PATCH takes RFC 7386 merge patches only (spec 4.3, 4.4): anything else is a 415. */
export function requireMergePatch(contentType: string | undefined): void {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  if (type !== MERGE_PATCH_CONTENT_TYPE) {
    throw new HttpError(
      415,
      `PATCH takes a JSON merge patch: send Content-Type ${MERGE_PATCH_CONTENT_TYPE}${type ? `, not ${type}` : ''}.`,
    );
  }
}

/** A Content-Type's `type/subtype` (token characters). */
const TYPE_NAME = /^[\w!#$%&'*+.^`|~-]+$/;

/**
 * The media type of a Content-Type header, lower-cased, without parameters; `false` for a header
 * that names none (empty, no `/`, characters a type may not hold: a 415).
 */
export function mediaTypeOf(header: string): string | false {
  const at = header.indexOf(';');
  const media = at < 0 ? header : header.slice(0, at);
  const slash = media.indexOf('/');
  if (slash < 0) return false;
  const type = media.slice(0, slash).trimStart().toLowerCase();
  const subtype = media
    .slice(slash + 1)
    .trimEnd()
    .toLowerCase();
  return TYPE_NAME.test(type) && TYPE_NAME.test(subtype) ? `${type}/${subtype}` : false;
}

/**
 * How a request's body is read, by its method and Content-Type: `none` (GET, HEAD and TRACE, or no
 * type and no body), `bytes` on a proxy call, `json` for the API's two JSON types, `unsupported`
 * for any other type (a 415, or on a path no route takes, the 404), `invalid` for a Content-Type
 * that names no type (a 415 everywhere).
 */
export function bodyKind(
  method: string,
  headers: IncomingHttpHeaders,
  proxy: boolean,
): 'none' | 'bytes' | 'json' | 'merge-patch' | 'unsupported' | 'invalid' {
  if (method === 'GET' || method === 'HEAD' || method === 'TRACE') return 'none';
  const header = headers['content-type'];
  if (header === undefined) {
    const length = headers['content-length'];
    if (headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return 'none';
    return proxy ? 'bytes' : 'unsupported';
  }
  const type = mediaTypeOf(header);
  if (type === false) return 'invalid';
  if (proxy) return 'bytes';
  if (type === JSON_CONTENT_TYPE) return 'json';
  return type === MERGE_PATCH_CONTENT_TYPE ? 'merge-patch' : 'unsupported';
}

/** The 415 of a JSON merge patch sent with another method than PATCH. */
export function mergePatchRefused(method: string): HttpError {
  return new HttpError(
    415,
    `Content-Type ${MERGE_PATCH_CONTENT_TYPE} is for PATCH only; send ${method} with ${JSON_CONTENT_TYPE}.`,
  );
}
